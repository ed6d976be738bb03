#include "analyze/python_frame.h"

namespace primus::analyze {

bool IsLibraryFile(const std::string& file) {
  return file.starts_with("<frozen") || file.find("/site-packages/") != std::string::npos ||
         file.find("/dist-packages/") != std::string::npos || file.find("/lib/python3") != std::string::npos;
}

std::string FrameText(const PythonFrame& frame) {
  size_t slash = frame.file.rfind('/');
  std::string base = slash == std::string::npos ? frame.file : frame.file.substr(slash + 1);
  return base + ":" + frame.line + " in " + frame.function;
}

}  // namespace primus::analyze
