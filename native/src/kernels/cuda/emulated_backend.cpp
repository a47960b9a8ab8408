// cuda_backend.cu compiled by the host compiler against the emulator (the emulated addon only).
#include "cuda_backend.cu"
