// store_bench: conditional writes, transactions and queue round trips (send, receive, delete) per
// second for the SQLite and in-memory store and queue, in one process and in four at once (four
// processes on one SQLite file; four threads for memory, whose state no other process can see).
// Usage: store_bench [--seconds S]   (default 1 s per figure). Files go to a temporary directory.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/logger.h"
#include "base/seam.h"
#include "queue/memory_queue.h"
#include "queue/sqlite_queue.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace mvr {
namespace {

using store::Condition;
using store::Update;

// The real outside world, as `mvr serve` wires it.
struct World {
  SystemClock clock;
  RealSleeper sleeper;
  SecureRandom random;
  StreamSink sink{stderr};
  Logger logger{sink, clock};
  mvr::Seam seam{clock, sleeper, random, random, logger};
};

// Runs `op(i)` until `seconds` pass; returns the count done (ops that failed abort the bench).
int64_t RunFor(double seconds, const std::function<Status(int64_t)>& op) {
  SystemClock clock;
  const TimePoint end = clock.Now() + Duration(static_cast<int64_t>(seconds * 1000));
  int64_t done = 0;
  while (clock.Now() < end) {
    for (int k = 0; k < 50; ++k, ++done) {
      Status s = op(done);
      if (!s.ok()) {
        std::fprintf(stderr, "store_bench: %s\n", s.ToString().c_str());
        std::exit(1);
      }
    }
  }
  return done;
}

// The three workloads against one store and queue. `worker` keeps keys of parallel workers apart.
struct Workloads {
  store::Store& store;
  queue::Queue& queue;
  int worker;

  // A fenced update, as a lease transition does: condition on the generation, then bump it.
  int64_t ConditionalWrites(double seconds) {
    std::vector<int64_t> generation(100, 0);
    return RunFor(seconds, [&](int64_t i) -> Status {
      const int slot = static_cast<int>(i % 100);
      store::Key key{"pool#w" + std::to_string(worker), "MEMBER#" + std::to_string(slot)};
      std::optional<Condition> cond;
      if (generation[slot] > 0) cond = Condition::Equals("generation", generation[slot]);
      auto r =
          store.Update(key, {Update::Add("generation", 1), Update::Set("state", "LEASED")}, cond);
      if (!r.ok()) return r.status();
      generation[slot]++;
      return Status::Ok();
    });
  }

  // A capacity reservation, as Phase 4 does: count check on CONTROL plus a new member.
  int64_t Transactions(double seconds) {
    const std::string pk = "pool#t" + std::to_string(worker);
    return RunFor(seconds, [&](int64_t i) -> Status {
      std::vector<store::WriteOp> writes = {
          store::WriteOp::UpdateItem(store::Key{pk, "CONTROL"}, {Update::Add("count", 1)},
                                     Condition::AttributeNotExists("count") ||
                                         Condition::Compare("count", Condition::Op::kLt, i + 1)),
          store::WriteOp::Put(
              store::Item{store::Key{pk, "MEMBER#" + std::to_string(i)}, {{"state", "CREATING"}}},
              Condition::ItemNotExists()),
      };
      return store.Transact(writes).status;
    });
  }

  int64_t QueueRoundTrips(double seconds) {
    return RunFor(seconds, [&](int64_t) -> Status {
      MVR_RETURN_IF_ERROR(queue.Send({"{\"job\":42}"}).status());
      queue::ReceiveOptions o;
      auto got = queue.Receive(o);
      if (!got.ok()) return got.status();
      if (got->empty()) return Internal("a sent message was not received");
      return queue.Delete((*got)[0].receipt);
    });
  }
};

struct Figures {
  double writes = 0, transactions = 0, round_trips = 0;
};

Figures RunOne(store::Store& s, queue::Queue& q, int worker, double seconds) {
  Workloads w{s, q, worker};
  Figures f;
  f.writes = w.ConditionalWrites(seconds) / seconds;
  f.transactions = w.Transactions(seconds) / seconds;
  f.round_trips = w.QueueRoundTrips(seconds) / seconds;
  return f;
}

Figures SqliteInProcess(const std::string& path, int worker, double seconds) {
  World seam;
  auto db = store::SqliteDb::Open(path, seam.sleeper);
  if (!db.ok()) {
    std::fprintf(stderr, "store_bench: %s\n", db.status().ToString().c_str());
    std::exit(1);
  }
  std::shared_ptr<store::SqliteDb> shared(std::move(*db));
  store::SqliteStore s(shared, seam.clock);
  queue::SqliteQueue q(shared, "bench-" + std::to_string(worker), "", seam.seam);
  return RunOne(s, q, worker, seconds);
}

// Four children on one file, all three workloads in step; the figure is the sum of their rates.
Figures SqliteFourProcesses(const std::string& path, double seconds) {
  int pipes[4][2];
  std::vector<pid_t> pids;
  for (int i = 0; i < 4; ++i) {
    if (::pipe(pipes[i]) != 0) std::exit(1);
    pid_t pid = ::fork();
    if (pid == 0) {
      Figures f = SqliteInProcess(path, 10 + i, seconds);
      ssize_t n = ::write(pipes[i][1], &f, sizeof(f));
      ::_exit(n == sizeof(f) ? 0 : 1);
    }
    ::close(pipes[i][1]);
    pids.push_back(pid);
  }
  Figures sum;
  for (int i = 0; i < 4; ++i) {
    Figures f;
    if (::read(pipes[i][0], &f, sizeof(f)) != sizeof(f)) std::exit(1);
    ::close(pipes[i][0]);
    sum.writes += f.writes;
    sum.transactions += f.transactions;
    sum.round_trips += f.round_trips;
  }
  for (pid_t pid : pids) ::waitpid(pid, nullptr, 0);
  return sum;
}

Figures MemoryThreads(int threads, double seconds) {
  World seam;
  store::MemoryStore s(seam.clock);
  std::vector<std::unique_ptr<queue::MemoryQueue>> queues;
  for (int i = 0; i < threads; ++i) {
    queues.push_back(std::make_unique<queue::MemoryQueue>(seam.clock, seam.sleeper));
  }
  std::vector<Figures> figures(threads);
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] { figures[i] = RunOne(s, *queues[i], i, seconds); });
  }
  for (auto& t : workers) t.join();
  Figures sum;
  for (const auto& f : figures) {
    sum.writes += f.writes;
    sum.transactions += f.transactions;
    sum.round_trips += f.round_trips;
  }
  return sum;
}

void Print(const char* label, const Figures& f) {
  std::printf("%-30s %14.0f %14.0f %18.0f\n", label, f.writes, f.transactions, f.round_trips);
}

}  // namespace
}  // namespace mvr

int main(int argc, char** argv) {
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: store_bench [--seconds S]\n");
      return 2;
    }
  }
  if (seconds <= 0) seconds = 1.0;
  std::string tmpl = (std::filesystem::temp_directory_path() / "mvr-store-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return 1;
  const std::string path = tmpl + "/state.db";

  std::printf("%-30s %14s %14s %18s\n", "backend", "cond writes/s", "transactions/s",
              "queue round trips/s");
  mvr::Print("sqlite, 1 process", mvr::SqliteInProcess(path, 0, seconds));
  mvr::Print("sqlite, 4 processes (sum)", mvr::SqliteFourProcesses(path, seconds));
  mvr::Print("memory, 1 thread", mvr::MemoryThreads(1, seconds));
  mvr::Print("memory, 4 threads (sum)", mvr::MemoryThreads(4, seconds));
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return 0;
}
