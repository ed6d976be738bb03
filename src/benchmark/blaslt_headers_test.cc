// The vendor declarations primus-cli makes by hand (it compiles without any
// vendor header) checked against the real CUDA 13 headers, where installed.
// Built only when CMake finds them (/usr/local/cuda/include).
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <library_types.h>
#include <nccl.h>

#include <cstddef>

#include "benchmark/blaslt_api.h"
#include "benchmark/comm_data.h"

namespace primus::benchmark {
namespace {

TEST(BlasLtHeadersTest, CublasLtDialectMatchesTheHeaders) {
  const BlasLtDialect& d = CublasLtDialect();
  EXPECT_EQ(d.op_n, CUBLAS_OP_N);
  EXPECT_EQ(d.op_t, CUBLAS_OP_T);
  EXPECT_EQ(d.compute_32f, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(d.compute_32f_fast_tf32, CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(d.r_32f, CUDA_R_32F);
  EXPECT_EQ(d.r_16f, CUDA_R_16F);
  EXPECT_EQ(d.r_16bf, CUDA_R_16BF);
  EXPECT_EQ(d.r_8f_e4m3, CUDA_R_8F_E4M3);
  EXPECT_EQ(d.desc_transa, CUBLASLT_MATMUL_DESC_TRANSA);
  EXPECT_EQ(d.desc_transb, CUBLASLT_MATMUL_DESC_TRANSB);
  EXPECT_EQ(d.pref_max_workspace_bytes, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
  EXPECT_EQ(d.heuristic_result_bytes, sizeof(cublasLtMatmulHeuristicResult_t));
  EXPECT_EQ(d.heuristic_state_offset, offsetof(cublasLtMatmulHeuristicResult_t, state));
  EXPECT_EQ(offsetof(cublasLtMatmulHeuristicResult_t, algo), 0u) << "the algorithm is read at offset 0";
  EXPECT_EQ(sizeof(cublasStatus_t), 4u);
}

TEST(BlasLtHeadersTest, RuntimeConstantsMatch) {
  EXPECT_EQ(static_cast<int>(cudaMemcpyHostToDevice), 1);
  EXPECT_EQ(static_cast<int>(cudaMemcpyDeviceToHost), 2);
  EXPECT_EQ(cudaStreamNonBlocking, 1u);
  EXPECT_EQ(sizeof(cudaError_t), sizeof(int));
}

TEST(BlasLtHeadersTest, NcclConstantsMatch) {
  EXPECT_EQ(sizeof(ncclUniqueId), 128u);
  EXPECT_EQ(static_cast<int>(ncclSum), 0);
  EXPECT_EQ(NcclDataType(DataType::kInt8), ncclInt8);
  EXPECT_EQ(NcclDataType(DataType::kUint8), ncclUint8);
  EXPECT_EQ(NcclDataType(DataType::kInt32), ncclInt32);
  EXPECT_EQ(NcclDataType(DataType::kUint32), ncclUint32);
  EXPECT_EQ(NcclDataType(DataType::kInt64), ncclInt64);
  EXPECT_EQ(NcclDataType(DataType::kUint64), ncclUint64);
  EXPECT_EQ(NcclDataType(DataType::kHalf), ncclFloat16);
  EXPECT_EQ(NcclDataType(DataType::kFloat), ncclFloat32);
  EXPECT_EQ(NcclDataType(DataType::kDouble), ncclFloat64);
  EXPECT_EQ(NcclDataType(DataType::kBfloat16), ncclBfloat16);
}

}  // namespace
}  // namespace primus::benchmark
