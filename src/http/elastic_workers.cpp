#include "http/elastic_workers.h"

#include <algorithm>

namespace mvr::http {

ElasticWorkers::ElasticWorkers(size_t max_threads, Duration idle_exit)
    : max_threads_(std::max<size_t>(1, max_threads)), idle_exit_(idle_exit) {}

ElasticWorkers::~ElasticWorkers() { Join(); }

void ElasticWorkers::Post(std::function<void()> task) {
  ReapEnded();
  std::lock_guard<std::mutex> lock(mu_);
  tasks_.push_back(std::move(task));
  // Every idle thread will take one queued task; start a thread for each task beyond them.
  if (tasks_.size() > idle_ && live_ < max_threads_) {
    ++live_;
    threads_.emplace_back([this] { Work(); });
    return;
  }
  wake_.notify_one();
}

void ElasticWorkers::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!tasks_.empty()) {
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      task = nullptr;  // what the task captured is released outside the lock
      lock.lock();
      continue;
    }
    if (joining_) break;
    auto ready = [this] { return !tasks_.empty() || joining_; };
    ++idle_;
    bool woken = true;
    if (idle_exit_.count() > 0) {
      woken = wake_.wait_for(lock, idle_exit_, ready);
    } else {
      wake_.wait(lock, ready);
    }
    --idle_;
    if (!woken) break;
  }
  --live_;
  ended_.push_back(std::this_thread::get_id());
}

void ElasticWorkers::ReapEnded() {
  std::vector<std::thread> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_.empty()) return;
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (std::find(ended_.begin(), ended_.end(), it->get_id()) != ended_.end()) {
        done.push_back(std::move(*it));
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
    ended_.clear();
  }
  // An ended thread has left Work (or is returning from it): joining it does not wait on a task.
  for (auto& t : done) t.join();
}

void ElasticWorkers::Join() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    joining_ = true;
    wake_.notify_all();
  }
  // A task that runs during the join may post another, which can start a thread: join until no
  // thread is left.
  for (;;) {
    std::vector<std::thread> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      all.swap(threads_);
      ended_.clear();
    }
    if (all.empty()) return;
    for (auto& t : all) t.join();
  }
}

size_t ElasticWorkers::live() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

}  // namespace mvr::http
