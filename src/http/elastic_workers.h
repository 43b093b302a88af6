// ElasticWorkers: the threads that run HttpServer's handlers. A thread is started only when a task
// arrives and every live thread is busy (up to `max_threads`), and, when `idle_exit` is positive,
// a thread that waited that long for a task ends. So a server that answers a request a minute
// (the supervisor in an idle VM) holds no worker thread between requests, and a busy one (the
// webhook endpoint) keeps its pool. Thread-safety: Post from any thread; Join from one thread
// that is not a worker.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/clock.h"

namespace mvr::http {

class ElasticWorkers {
 public:
  // idle_exit <= 0: a started thread stays until Join.
  ElasticWorkers(size_t max_threads, Duration idle_exit);
  ~ElasticWorkers();
  ElasticWorkers(const ElasticWorkers&) = delete;
  ElasticWorkers& operator=(const ElasticWorkers&) = delete;

  // Queues the task; it runs on an idle thread, a new one, or (at max_threads) the first to
  // finish. Tasks posted after Join started still run before Join returns.
  void Post(std::function<void()> task);
  // Runs every queued task, then ends and joins every thread. Idempotent.
  void Join();
  // Threads alive now (running a task or waiting for one).
  size_t live() const;

 private:
  void Work();
  // Joins the threads that have ended. Called with mu_ not held.
  void ReapEnded();

  const size_t max_threads_;
  const Duration idle_exit_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  size_t live_ = 0;
  size_t idle_ = 0;
  bool joining_ = false;
  std::vector<std::thread> threads_;
  std::vector<std::thread::id> ended_;
};

}  // namespace mvr::http
