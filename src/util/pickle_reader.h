// A reader of Python pickles that holds only data: dicts, lists, tuples,
// strings, bytes, integers, floats, booleans and None, as pickle.dumps
// (protocols 2 to 5) and PyTorch's TorchScript pickler write them. It
// exists for the files PyTorch leaves behind, such as the NCCL flight
// recorder's dumps (analyze/flight_record.h), which are pickles.
//
// Unpickling runs no code here: a pickle that names a class or a function
// is refused, except TorchScript's own wrappers around plain data
// (torch.jit._pickle.restore_type_tag and build_intlist and its kin), which
// are read as the data they wrap. Input is untrusted: every length, the
// memo, the stack and the nesting are bounded, and a malformed pickle is an
// error naming the byte offset, never a crash.
//
// The result is JSON: a tuple is an array, bytes are a string (each byte one
// character, U+0000 to U+00FF), an integer beyond 64 bits is refused, and a
// dict's keys are written as text (an integer key 3 becomes "3").
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace primus {

// The most nested containers a pickle may have, and the most values on its stack.
inline constexpr size_t kPickleMaxDepth = 64;
inline constexpr size_t kPickleMaxStack = 1 << 20;

// `source` names the input in errors ("rank 3's flight recorder dump ...").
Result<nlohmann::json> ReadPickle(std::string_view bytes, const std::string& source);

}  // namespace primus
