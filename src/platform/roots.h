// Where detection reads the kernel's view of the machine. Every file the
// platform layer reads lives under one of these roots, so a test can point
// them at a fixture tree (tests/fixtures/hosts/<host>/{sys,proc,etc}) and a
// user can point them at a captured tree with PRIMUS_SYSFS_ROOT,
// PRIMUS_PROCFS_ROOT and PRIMUS_ETC_ROOT.
#pragma once

#include <string>
#include <string_view>

namespace primus::platform {

struct Roots {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  std::string etc = "/etc";

  // The real roots, each replaced by its PRIMUS_*_ROOT variable when set.
  static Roots FromEnvironment();
  // <dir>/sys, <dir>/proc and <dir>/etc: a captured or fixture tree.
  static Roots UnderDirectory(const std::string& dir);

  // True when procfs is the running kernel's: only then do interface
  // addresses come from getifaddrs (a fixture tree has no live sockets).
  bool IsLiveSystem() const { return procfs == "/proc"; }

  std::string Sys(std::string_view relative) const;
  std::string Proc(std::string_view relative) const;
  std::string Etc(std::string_view relative) const;
};

}  // namespace primus::platform
