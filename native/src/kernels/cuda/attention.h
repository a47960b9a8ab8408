// Fused (flash-style) causal attention on the GPU, fp32 on the CUDA cores: scores and
// probabilities live in shared memory and registers, never in device memory, and the backward
// pass recomputes them from the forward's log-sum-exp.
//
// Why fp32 and not tensor cores yet: these kernels are exact enough for the parity mode and
// serve every precision. Attention is about 5% of a training step's FLOPs at the 0.5B shape
// (4 x B x H x S^2 / 2 x hd per layer forward, against 6 x params x tokens for the linear
// layers), and cuBLAS's path would instead write and read every head's [S, S] probabilities
// (about 470 MB a layer at 8 x 1024 tokens). A tensor-core version is the next step where the
// GPU benchmark shows attention's share of the step is large.
#pragma once

#include <cstdint>

#include "../backend.h"
#include "runtime.h"

namespace sw::cuda {

// Head dimensions the kernels are compiled for.
bool attention_head_dim_supported(int head_dim);

// Training layout (a.dense_seq_len > 0): whole sequences, tiles of 64 queries x 64 keys.
void attention_forward_dense(const AttentionArgs<float>& a, cudaStream_t stream);
// Any rows (KV-cached prefill and decoding): one block per (row, kv head), a warp per query head.
void attention_forward_rows(const AttentionArgs<float>& a, cudaStream_t stream);
// Backward over [batch, seq_len]; `scratch` holds batch * seq_len * heads floats.
void attention_backward(const AttentionGradArgs<float>& a, float* scratch, cudaStream_t stream);

}  // namespace sw::cuda
