// A temporary directory for tests that run real child processes, with helpers to write small
// shell scripts into it (fake dockerd, containerd, docker CLI, runner, power-off).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace mvr::supervisor::testing {

class ScriptDir {
 public:
  explicit ScriptDir(const std::string& name) {
    path_ = std::filesystem::temp_directory_path() /
            (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScriptDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScriptDir(const ScriptDir&) = delete;
  ScriptDir& operator=(const ScriptDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  // Writes an executable /bin/sh script; "$D" inside it is this directory.
  std::string Script(const std::string& name, const std::string& body) const {
    std::string p = file(name);
    std::ofstream out(p);
    out << "#!/bin/sh\nD='" << path() << "'\n" << body << "\n";
    out.close();
    ::chmod(p.c_str(), 0755);
    return p;
  }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(file(name));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  bool Exists(const std::string& name) const { return std::filesystem::exists(path_ / name); }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path path_;
};

// Fake Docker daemons: dockerd fails for each driver listed in $D/broken, hangs without answering
// for drivers in $D/hang, and otherwise records its driver in $D/running until SIGTERM. The fake
// `docker info` prints the running driver or fails.
inline void WriteFakeDocker(const ScriptDir& d) {
  d.Script("containerd",
           "trap 'echo containerd >> \"$D/stopped\"; exit 0' TERM\n"
           "echo up > \"$D/containerd.up\"\n"
           "while :; do sleep 0.05; done");
  d.Script(
      "dockerd",
      "for a in \"$@\"; do case \"$a\" in --storage-driver=*) drv=\"${a#*=}\";; esac; done\n"
      "echo \"$drv\" >> \"$D/tried\"\n"
      "if grep -qx \"$drv\" \"$D/broken\" 2>/dev/null; then echo \"$drv broken\" >&2; exit 1; fi\n"
      "trap 'rm -f \"$D/running\"; echo dockerd >> \"$D/stopped\"; exit 0' TERM\n"
      "if ! grep -qx \"$drv\" \"$D/hang\" 2>/dev/null; then echo \"$drv\" > \"$D/running\"; fi\n"
      "while :; do sleep 0.05; done");
  d.Script("docker-info", "cat \"$D/running\" 2>/dev/null || exit 1");
}

}  // namespace mvr::supervisor::testing
