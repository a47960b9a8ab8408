// attention.cu compiled by the host compiler against the emulator (the emulated addon only).
#include "attention.cu"
