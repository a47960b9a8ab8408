// Fused (flash-style) causal attention on the GPU: scores and probabilities live in shared memory
// and registers, never in device memory, and the backward pass recomputes them from the
// forward's log-sum-exp. (cuBLAS's path would instead write and read every head's [S, S]
// probabilities, about 470 MB a layer at 8 x 1024 tokens.) Training attention has two versions:
// fp32 on the CUDA cores (attention.cu; the fp32 parity mode) and bf16 operands on the tensor
// cores with fp32 accumulation (attention_tensor_cores.cuh; the tf32 and bf16 modes): on the CUDA
// cores alone, attention took a large share of a 0.5B training step for a small share of its
// FLOPs (measurements/gpu/run.sh measures it; figures in docs/results.md).
#pragma once

#include <cstdint>

#include "../backend.h"
#include "runtime.h"

namespace sw::cuda {

// Head dimensions the kernels are compiled for.
bool attention_head_dim_supported(int head_dim);

// Training layout (a.dense_seq_len > 0): whole sequences, tiles of 64 queries x 64 keys; on the
// tensor cores when `tensor_cores` and every row start is 16-byte aligned.
void attention_forward_dense(const AttentionArgs<float>& a, bool tensor_cores, cudaStream_t stream);
// Any rows (KV-cached prefill and decoding): one block per (row, kv head), a warp per query head.
void attention_forward_rows(const AttentionArgs<float>& a, cudaStream_t stream);
// Backward over [batch, seq_len] (tensor cores as for the forward); `scratch` holds
// attention_backward_scratch_floats(a, tensor_cores) floats.
size_t attention_backward_scratch_floats(const AttentionGradArgs<float>& a, bool tensor_cores);
void attention_backward(const AttentionGradArgs<float>& a, bool tensor_cores, float* scratch, cudaStream_t stream);

}  // namespace sw::cuda
