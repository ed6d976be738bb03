// One frame of a Python stack, as a stack dump (faulthandler, py-spy) or a
// flight recorder entry names it, and which frames are the user's own: the
// evidence of a hang is the innermost frame outside Python's and the
// installed packages' files ("train.py:20 in wait_for_peer").
#pragma once

#include <string>

namespace primus::analyze {

struct PythonFrame {
  std::string file;
  std::string line;
  std::string function;
};

// A file of Python itself or of an installed package (site-packages,
// dist-packages, lib/python3.*, <frozen ...>), not the user's.
bool IsLibraryFile(const std::string& file);
// "train.py:20 in wait_for_peer": the file's base name.
std::string FrameText(const PythonFrame& frame);

}  // namespace primus::analyze
