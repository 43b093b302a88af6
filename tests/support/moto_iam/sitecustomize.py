"""Loaded by moto_server through PYTHONPATH in the IAM-enforcing tests (tests/support/moto_iam.h).

moto 5.2.1 evaluates a DynamoDB or SSM request's IAM policy against the resource "*" (those
services define no _determine_resource), so a policy that names its table or parameter, as every
policy in deploy/iam does, is denied everything. This names the resource as AWS does:
  - DynamoDB: table/NAME, or table/NAME/index/INDEX for a Query or Scan of an index;
    TransactWriteItems and TransactGetItems are authorized per item, with the item's own action
    (PutItem, UpdateItem, DeleteItem, ConditionCheckItem, GetItem) on its table, as AWS does.
  - SSM: parameter/NAME for the operations that take a Name; GetParameters and DeleteParameters
    are authorized once per name, as AWS does.
The deployer's policy (deploy/iam/deployer.json, tests/deploy/deploy_moto_test.py) names the
resources of more services, which moto 5.2.1 also evaluates against "*" or not at all:
  - Lambda: function:NAME (from the path, or CreateFunction's FunctionName), event-source-mapping:
    UUID, the ARN of a tags path; lists and CreateEventSourceMapping stay "*" (AWS names none).
    CreateFunction and UpdateFunctionConfiguration with a Role are also authorized as iam:PassRole
    on that role, as AWS does (moto runs no check of its own). A request with no body is signed
    as one (moto would sign Lambda's parsed headers as its body: SignatureDoesNotMatch).
  - CloudWatch Logs: log-group:NAME:*; EventBridge: rule/NAME.
  - IAM: role/NAME, policy/NAME (CreatePolicy) or the PolicyArn, and for Detach{User,Group,Role}
    Policy the user, group or role (AWS's resource; the policy is its iam:PolicyARN condition).
  - SQS: CreateQueue names the queue it creates (moto names only queues that exist).
  - CloudWatch: moto names the action after the signing name ("monitoring:PutMetricAlarm"), which
    no policy names, and the resource "*": the action is cloudwatch:OPERATION, the resource
    alarm:NAME or dashboard/NAME, DeleteAlarms and DeleteDashboards once per name, as AWS does;
    DescribeAlarms is alarm:* (AWS checks that whatever names or prefix the request gives).
  - IAM permissions boundaries (issue 53, item 5): moto supplies no condition key to an identity
    policy and treats a condition that fails as an explicit deny, even in an Allow statement. For
    the role actions AWS gives the key iam:PermissionsBoundary (CreateRole and
    PutRolePermissionsBoundary: the boundary the request names; PutRolePolicy, AttachRolePolicy,
    DetachRolePolicy, DeleteRolePolicy, DeleteRolePermissionsBoundary: the role's boundary now),
    the shim supplies it, absent when there is none, and evaluates the conditions on it as AWS
    does (StringEquals, StringNotEquals, StringLike, StringNotLike, ArnEquals, ArnLike,
    ArnNotEquals, ArnNotLike; an absent key fails the positive operators and passes the negated
    ones); a condition that fails makes its statement not apply, Allow or Deny. Conditions on keys
    the shim does not supply stay as moto has them (they pass). The boundary itself is not
    enforced on the role's own calls (moto never evaluates boundaries).
Only the resource and the action checked change; moto's own evaluation does the rest.
"""
import fnmatch
import json
import re
import threading
from urllib.parse import unquote

# Condition keys the shim supplies for the request being authorized (this thread's): key -> value,
# None meaning "absent from the request".
_CONTEXT = threading.local()


def _install():
    try:
        from moto.dynamodb.responses import DynamoHandler
        from moto.ssm.responses import SimpleSystemManagerResponse
    except Exception:  # not moto_server, or another moto: leave it alone
        return

    def body_of(handler):
        try:
            return json.loads(handler.raw_body or b"{}")
        except ValueError:
            return {}

    def table_arn(handler, table, index=None):
        arn = f"arn:aws:dynamodb:{handler.region}:{handler.current_account}:table/{table}"
        return arn + (f"/index/{index}" if index else "")

    def dynamodb_resource(self):
        body = body_of(self)
        if "TableName" not in body:
            return "*"
        return table_arn(self, body["TableName"], body.get("IndexName"))

    item_actions = {
        "Put": "PutItem",
        "Update": "UpdateItem",
        "Delete": "DeleteItem",
        "ConditionCheck": "ConditionCheckItem",
        "Get": "GetItem",
    }
    plain = DynamoHandler._authenticate_and_authorize_normal_action

    def dynamodb_authorize(self, resource="*"):
        action = self._get_action()
        if action not in ("TransactWriteItems", "TransactGetItems"):
            return plain(self, resource)
        items = body_of(self).get("TransactItems", [])
        try:
            for item in items:
                for kind, request in item.items():
                    self._get_action = lambda a=item_actions.get(kind, kind): a
                    plain(self, table_arn(self, request.get("TableName", "")))
        finally:
            del self._get_action
        return None

    def ssm_resource(self):
        body = body_of(self)
        name = body.get("Name")
        if not isinstance(name, str):
            return "*"
        name = name if name.startswith("/") else "/" + name
        return f"arn:aws:ssm:{self.region}:{self.current_account}:parameter{name}"

    def authorize_each(plain_of_class, arns):
        def authorize(self, resource="*"):
            names = arns(self)
            if names is None:
                return plain_of_class(self, resource)
            for arn in names:
                plain_of_class(self, arn)
            return None
        return authorize

    def ssm_names(self):
        if self._get_action() not in ("GetParameters", "DeleteParameters"):
            return None
        names = body_of(self).get("Names") or []
        return [f"arn:aws:ssm:{self.region}:{self.current_account}:parameter"
                + (n if n.startswith("/") else "/" + n) for n in names] or ["*"]

    DynamoHandler._determine_resource = dynamodb_resource
    DynamoHandler._authenticate_and_authorize_normal_action = dynamodb_authorize
    SimpleSystemManagerResponse._determine_resource = ssm_resource
    SimpleSystemManagerResponse._authenticate_and_authorize_normal_action = authorize_each(
        SimpleSystemManagerResponse._authenticate_and_authorize_normal_action, ssm_names)
    _install_deployer_services(body_of)
    _install_cloudwatch()
    _install_boundary_conditions()


def _check_as(handler, action, resource):
    """Authorizes the signed request `handler` serves as IAM action `action` on `resource` (once
    enforcement is on), the way moto checks the request's own action."""
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.iam.access_control import IAMRequest
    if ActionAuthenticatorMixin.request_count < settings.INITIAL_NO_AUTH_ACTION_COUNT:
        return
    request = IAMRequest(account_id=handler.current_account, method=handler.method,
                         path=handler.raw_path, data={}, body=handler.raw_body,
                         headers=handler.headers, action=handler._get_action())
    request._action = action
    request.check_action_permitted(resource)


def _install_deployer_services(body_of):
    try:
        from moto.awslambda.responses import LambdaResponse
        from moto.events.responses import EventsHandler
        from moto.iam.responses import IamResponse
        from moto.logs.responses import LogsResponse
        from moto.sqs.responses import SQSResponse
    except Exception:
        return

    def arn(handler, service, rest):
        return f"arn:aws:{service}:{handler.region}:{handler.current_account}:{rest}"

    def lambda_resource(self):
        path = unquote(self.raw_path.split("?", 1)[0])
        m = re.match(r"^/[^/]+/tags/(.+)$", path)
        if m:
            return m.group(1)
        m = re.match(r"^/[^/]+/event-source-mappings/([\w-]+)/?$", path)
        if m:
            return arn(self, "lambda", "event-source-mapping:" + m.group(1))
        m = re.match(r"^/[^/]+/functions/([^/]+)", path)
        if m:
            name = m.group(1)
        elif re.match(r"^/[^/]+/functions/?$", path) and self.method == "POST":
            name = body_of(self).get("FunctionName", "")
        else:
            return "*"
        if name.startswith("arn:"):
            name = name.split(":")[6]
        return arn(self, "lambda", "function:" + name.split(":")[0])

    plain_lambda = LambdaResponse._authenticate_and_authorize_normal_action

    def lambda_authorize(self, resource="*"):
        # moto's Lambda handler keeps the request's headers in `data`, which the signature check
        # signs as the body of a request that has none (SignatureDoesNotMatch for every GET and
        # DELETE): the check gets the empty body the client signed.
        data = self.data
        if not self.raw_body:
            self.data = {}
        try:
            plain_lambda(self, resource)
        finally:
            self.data = data
        if self._get_action() in ("CreateFunction", "UpdateFunctionConfiguration"):
            role = body_of(self).get("Role")
            if role:
                _check_as(self, "iam:PassRole", role)

    def logs_resource(self):
        name = body_of(self).get("logGroupName")
        return arn(self, "logs", f"log-group:{name}:*") if name else "*"

    def events_resource(self):
        body = body_of(self)
        name = body.get("Rule") or (body.get("Name") if self._get_action() != "ListRules" else None)
        return arn(self, "events", "rule/" + name) if name else "*"

    def iam_resource(self):
        action = self._get_action()
        account = self.current_account
        get = lambda key: self._get_param(key)
        for kind, key in (("user", "UserName"), ("group", "GroupName"), ("role", "RoleName")):
            if get(key):
                return f"arn:aws:iam::{account}:{kind}/{get(key)}"
        if get("PolicyArn"):
            return get("PolicyArn")
        if action == "CreatePolicy" and get("PolicyName"):
            return f"arn:aws:iam::{account}:policy/{get('PolicyName')}"
        return "*"

    plain_sqs_resource = SQSResponse._determine_resource

    def sqs_resource(self):
        if self._get_action() == "CreateQueue" and self._get_param("QueueName"):
            return arn(self, "sqs", self._get_param("QueueName"))
        return plain_sqs_resource(self)

    LambdaResponse._determine_resource = lambda_resource
    LambdaResponse._authenticate_and_authorize_normal_action = lambda_authorize
    LogsResponse._determine_resource = logs_resource
    EventsHandler._determine_resource = events_resource
    IamResponse._determine_resource = iam_resource
    SQSResponse._determine_resource = sqs_resource


def _install_cloudwatch():
    try:
        from moto.cloudwatch.responses import CloudWatchResponse
        from moto.iam.access_control import IAMRequest
    except Exception:
        return

    class CloudWatchRequest(IAMRequest):
        """moto's IAM request with the action CloudWatch's IAM names (not its signing name)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._action = "cloudwatch:" + self._action.split(":", 1)[1]

    def resources(self):
        alarm = f"arn:aws:cloudwatch:{self.region}:{self.current_account}:alarm:"
        dashboard = f"arn:aws:cloudwatch::{self.current_account}:dashboard/"
        action = self._get_action()
        if action == "DescribeAlarms":
            return [alarm + "*"]
        if action in ("PutMetricAlarm", "PutCompositeAlarm", "SetAlarmState"):
            return [alarm + self._get_param("AlarmName", "")]
        if action == "DeleteAlarms":
            return [alarm + n for n in self._get_param("AlarmNames", [])] or [alarm]
        if action in ("GetDashboard", "PutDashboard"):
            return [dashboard + self._get_param("DashboardName", "")]
        if action == "DeleteDashboards":
            return [dashboard + n for n in self._get_param("DashboardNames", [])] or [dashboard]
        return ["*"]

    def authorize(self, resource="*"):
        for arn in resources(self):
            self._authenticate_and_authorize_action(CloudWatchRequest, arn)

    CloudWatchResponse._authenticate_and_authorize_normal_action = authorize



def _condition_holds(operator, expected, actual):
    """One condition operator of AWS's on a key the shim supplies (`actual` None: absent)."""
    expected = expected if isinstance(expected, list) else [expected]
    negated = "Not" in operator
    base = operator.replace("Not", "")
    if actual is None:
        return negated
    if base in ("StringEquals", "ArnEquals"):
        match = actual in expected
    elif base in ("StringLike", "ArnLike"):
        match = any(fnmatch.fnmatchcase(actual, e) for e in expected)
    else:
        return False  # an operator not modelled here: the statement does not apply
    return match != negated


def _install_boundary_conditions():
    try:
        from moto.iam.access_control import IAMPolicyStatement, PermissionResult
        from moto.iam.responses import IamResponse
    except Exception:
        return

    plain_statement = IAMPolicyStatement.is_action_permitted

    def is_action_permitted(self, action, resource="*", principal=None, incoming=None):
        known = getattr(_CONTEXT, "keys", None) or {}
        for operator, pairs in (self._statement.get("Condition") or {}).items():
            for key, expected in pairs.items():
                if key in known and not _condition_holds(operator, expected, known[key]):
                    return PermissionResult.NEUTRAL
        return plain_statement(self, action, resource, principal, incoming)

    from_request = {"CreateRole", "PutRolePermissionsBoundary"}
    from_role = {"PutRolePolicy", "AttachRolePolicy", "DetachRolePolicy", "DeleteRolePolicy",
                 "DeleteRolePermissionsBoundary"}
    plain_iam = IamResponse._authenticate_and_authorize_normal_action

    def iam_authorize(self, resource="*"):
        action = self._get_action()
        keys = {}
        if action in from_request:
            keys["iam:PermissionsBoundary"] = self._get_param("PermissionsBoundary") or None
        elif action in from_role:
            try:
                role = self.backend.get_role(self._get_param("RoleName"))
                keys["iam:PermissionsBoundary"] = role.permissions_boundary_arn or None
            except Exception:
                keys["iam:PermissionsBoundary"] = None
        _CONTEXT.keys = keys
        try:
            return plain_iam(self, resource)
        finally:
            _CONTEXT.keys = {}

    IAMPolicyStatement.is_action_permitted = is_action_permitted
    IamResponse._authenticate_and_authorize_normal_action = iam_authorize


def _install_policy_simulator():
    """iam:SimulatePrincipalPolicy, which moto 5.2.1 does not implement (`mvr doctor` asks it about
    the set's mutating calls). The principal's policies are gathered as moto gathers them for an
    enforced request (inline, attached, and a user's groups'), and each action and resource is
    judged by moto's own IAMPolicy: an explicit Deny wins, then any Allow, else an implicit deny.
    Conditions and permission boundaries are not modelled (no policy of deploy/iam has either)."""
    try:
        from moto.core.responses import ActionResult
        from moto.iam.access_control import IAMPolicy, PermissionResult
        from moto.iam.exceptions import NotFoundException
        from moto.iam.responses import IamResponse
    except Exception:
        return

    def policies_of(backend, arn):
        # arn:PARTITION:iam::ACCOUNT:user/PATH/NAME or role/PATH/NAME
        kind, _, path = arn.split(":", 5)[-1].partition("/")
        name = path.rsplit("/", 1)[-1]
        if kind == "user":
            backend.get_user(name)
            docs = [backend.get_user_policy(name, p) for p in backend.list_user_policies(name)]
            docs += list(backend.list_attached_user_policies(name)[0])
            for group in backend.get_groups_for_user(name):
                docs += [backend.get_group_policy(group.name, p)
                         for p in backend.list_group_policies(group.name)]
                docs += list(backend.list_attached_group_policies(group.name)[0])
            return docs
        if kind == "role":
            backend.get_role(name)
            docs = [backend.get_role_policy(name, p)[1] for p in backend.list_role_policies(name)]
            docs += list(backend.list_attached_role_policies(name)[0])
            return docs
        raise NotFoundException(f"PolicySourceArn {arn} names no user or role")

    def params(handler, name):
        value = handler._get_param(name)
        if isinstance(value, list):
            return value
        return handler._get_multi_param(name + ".member")

    def simulate_principal_policy(self):
        arn = self._get_param("PolicySourceArn")
        docs = policies_of(self.backend, arn)
        results = []
        for action in params(self, "ActionNames"):
            for resource in params(self, "ResourceArns") or ["*"]:
                verdicts = [IAMPolicy(d).is_action_permitted(action, resource) for d in docs]
                if PermissionResult.DENIED in verdicts:
                    decision = "explicitDeny"
                elif PermissionResult.PERMITTED in verdicts:
                    decision = "allowed"
                else:
                    decision = "implicitDeny"
                results.append({"EvalActionName": action, "EvalResourceName": resource,
                                "EvalDecision": decision})
        return ActionResult({"EvaluationResults": results, "IsTruncated": False})

    IamResponse.simulate_principal_policy = simulate_principal_policy


_install()
_install_policy_simulator()
