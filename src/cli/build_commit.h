// The git commit the binary was built from, for `primus-cli --version`:
// "commit 1a2b3c4d5e6f", "commit 1a2b3c4d5e6f, dirty" when tracked files had
// changes, or a sentence saying the source tree had no git history (a
// tarball). Written into build_commit.cc on every build by
// cmake/build_commit.cmake.
#pragma once

namespace primus::cli {

const char* BuildCommit();

}  // namespace primus::cli
