"""Loaded by moto_server through PYTHONPATH in the IAM-enforcing tests (tests/support/moto_iam.h).

moto 5.2.1 evaluates a DynamoDB or SSM request's IAM policy against the resource "*" (those
services define no _determine_resource), so a policy that names its table or parameter, as every
policy in deploy/iam does, is denied everything. This names the resource as AWS does:
  - DynamoDB: table/NAME, or table/NAME/index/INDEX for a Query or Scan of an index;
    TransactWriteItems and TransactGetItems are authorized per item, with the item's own action
    (PutItem, UpdateItem, DeleteItem, ConditionCheckItem, GetItem) on its table, as AWS does.
  - SSM: parameter/NAME for the operations that take a Name.
Only the resource and the action checked change; moto's own evaluation does the rest.
"""
import json


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

    DynamoHandler._determine_resource = dynamodb_resource
    DynamoHandler._authenticate_and_authorize_normal_action = dynamodb_authorize
    SimpleSystemManagerResponse._determine_resource = ssm_resource


_install()
