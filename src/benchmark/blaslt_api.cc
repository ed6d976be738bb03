#include "benchmark/blaslt_api.h"

namespace primus::benchmark {

const BlasLtDialect& CublasLtDialect() {
  static const BlasLtDialect dialect = [] {
    BlasLtDialect d;
    d.what = "cuBLASLt";
    d.libraries = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so",
                   "/usr/local/cuda/lib64/libcublasLt.so"};
    d.install_hint = "install cuBLAS (libcublasLt) and put its directory on LD_LIBRARY_PATH (a pip environment has it "
                     "under site-packages/nvidia/cublas/lib)";
    d.prefix = "cublasLt";
    d.op_n = 0;                      // CUBLAS_OP_N
    d.op_t = 1;                      // CUBLAS_OP_T
    d.compute_32f = 68;              // CUBLAS_COMPUTE_32F
    d.compute_32f_fast_tf32 = 77;    // CUBLAS_COMPUTE_32F_FAST_TF32
    d.r_32f = 0;                     // CUDA_R_32F
    d.r_16f = 2;                     // CUDA_R_16F
    d.r_16bf = 14;                   // CUDA_R_16BF
    d.r_8f_e4m3 = 28;                // CUDA_R_8F_E4M3
    d.r_8f_e4m3_fnuz = -1;
    d.desc_transa = 3;               // CUBLASLT_MATMUL_DESC_TRANSA
    d.desc_transb = 4;               // CUBLASLT_MATMUL_DESC_TRANSB
    d.pref_max_workspace_bytes = 1;  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
    // cublasLtMatmulHeuristicResult_t: algo (uint64_t[8]), size_t workspaceSize,
    // cublasStatus_t state, float wavesCount, int reserved[4].
    d.heuristic_result_bytes = 96;
    d.heuristic_state_offset = 72;
    return d;
  }();
  return dialect;
}

const BlasLtDialect& HipblasLtDialect() {
  static const BlasLtDialect dialect = [] {
    BlasLtDialect d;
    d.what = "hipBLASLt";
    d.libraries = {"libhipblaslt.so.1", "libhipblaslt.so.0", "libhipblaslt.so", "/opt/rocm/lib/libhipblaslt.so"};
    d.install_hint = "install ROCm's hipBLASLt and put /opt/rocm/lib on LD_LIBRARY_PATH";
    d.prefix = "hipblasLt";
    d.op_n = 111;                    // HIPBLAS_OP_N
    d.op_t = 112;                    // HIPBLAS_OP_T
    d.compute_32f = 2;               // HIPBLAS_COMPUTE_32F
    d.compute_32f_fast_tf32 = 6;     // HIPBLAS_COMPUTE_32F_FAST_TF32
    d.r_32f = 0;                     // HIP_R_32F
    d.r_16f = 2;                     // HIP_R_16F
    d.r_16bf = 14;                   // HIP_R_16BF
    d.r_8f_e4m3 = 28;                // HIP_R_8F_E4M3 (gfx950)
    d.r_8f_e4m3_fnuz = 1000;         // HIP_R_8F_E4M3_FNUZ (gfx942)
    d.desc_transa = 0;               // HIPBLASLT_MATMUL_DESC_TRANSA
    d.desc_transb = 1;               // HIPBLASLT_MATMUL_DESC_TRANSB
    d.pref_max_workspace_bytes = 1;  // HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
    // hipblasLtMatmulHeuristicResult_t: algo {uint8_t data[16]; size_t
    // max_workspace_bytes}, size_t workspaceSize, hipblasStatus_t state,
    // float wavesCount, int reserved[4].
    d.heuristic_result_bytes = 56;
    d.heuristic_state_offset = 32;
    return d;
  }();
  return dialect;
}

}  // namespace primus::benchmark
