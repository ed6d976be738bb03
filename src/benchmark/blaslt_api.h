// The subset of cuBLASLt and hipBLASLt the GEMM benchmark calls, declared
// here so that primus-cli compiles and links without any vendor header or
// library (both are opened at run time). The two libraries share one API
// shape (handle, matmul descriptor, matrix layouts, preference, heuristic,
// matmul) and differ in names, enum values and the size of a heuristic
// result: a BlasLtDialect carries those differences. The cuBLASLt values
// are checked against the real headers by blaslt_headers_test.cc wherever
// the CUDA headers are installed; the hipBLASLt values come from
// hipblaslt.h / hipblas-common.h / hip/library_types.h (ROCm 6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace primus::benchmark {

struct BlasLtDialect {
  std::string what;                       // "cuBLASLt" | "hipBLASLt"
  std::vector<std::string> libraries;     // sonames to try, in order
  std::string install_hint;
  std::string prefix;                     // "cublasLt" | "hipblasLt"
  int op_n = 0, op_t = 0;                 // cublasOperation_t / hipblasOperation_t
  int compute_32f = 0;                    // *_COMPUTE_32F
  int compute_32f_fast_tf32 = 0;          // *_COMPUTE_32F_FAST_TF32
  int r_32f = 0, r_16f = 0, r_16bf = 0;   // cudaDataType / hipDataType
  int r_8f_e4m3 = 0;                      // OCP e4m3fn
  int r_8f_e4m3_fnuz = -1;                // AMD gfx942 only; -1 where absent
  int desc_transa = 0, desc_transb = 0;   // matmul descriptor attributes
  int pref_max_workspace_bytes = 0;       // preference attribute (value: uint64_t)
  size_t heuristic_result_bytes = 0;      // sizeof(*MatmulHeuristicResult_t)
  size_t heuristic_state_offset = 0;      // offsetof(..., state); the algo is at offset 0
};

const BlasLtDialect& CublasLtDialect();
const BlasLtDialect& HipblasLtDialect();

// Function types (all handles and descriptors are opaque pointers; every
// call returns a status where 0 is success).
using BlasLtCreate = int (*)(void** handle);
using BlasLtDestroy = int (*)(void* handle);
using BlasLtMatmulDescCreate = int (*)(void** desc, int compute_type, int scale_type);
using BlasLtMatmulDescDestroy = int (*)(void* desc);
using BlasLtMatmulDescSetAttribute = int (*)(void* desc, int attribute, const void* value, size_t bytes);
using BlasLtMatrixLayoutCreate = int (*)(void** layout, int type, uint64_t rows, uint64_t cols, int64_t ld);
using BlasLtMatrixLayoutDestroy = int (*)(void* layout);
using BlasLtPreferenceCreate = int (*)(void** preference);
using BlasLtPreferenceDestroy = int (*)(void* preference);
using BlasLtPreferenceSetAttribute = int (*)(void* preference, int attribute, const void* value, size_t bytes);
using BlasLtAlgoGetHeuristic = int (*)(void* handle, void* desc, void* a, void* b, void* c, void* d, void* preference,
                                       int requested, void* results, int* returned);
using BlasLtMatmul = int (*)(void* handle, void* desc, const void* alpha, const void* a, void* a_layout, const void* b,
                             void* b_layout, const void* beta, const void* c, void* c_layout, void* d, void* d_layout,
                             const void* algo, void* workspace, size_t workspace_bytes, void* stream);
using CublasLtGetVersion = size_t (*)();
using BlasLtGetStatusString = const char* (*)(int status);

}  // namespace primus::benchmark
