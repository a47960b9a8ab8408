// The CUDA emulator (see emulator.h). One fiber per CUDA thread of a block; a fiber runs until it
// reaches a barrier or ends, and a barrier opens when every live thread it spans has reached it.
// Fibers start once on their own stacks and then serve block after block. On x86-64 a switch is
// six pushes, a stack swap and six pops (sw_emu_switch below); elsewhere it is swapcontext, which
// also makes two system calls per switch (for the signal mask), several times slower. SW_EMULATOR_ORDER=reverse runs the fibers of a block last to first, which
// changes which side of a missing barrier wins; SW_EMULATOR_MEMORY sets the device memory
// reported (bytes, default 4 GiB), so out-of-memory errors can be tested.
#ifdef SW_CUDA_EMULATOR

#include "emulator.h"

#include <ucontext.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace sw::emu {
namespace {

constexpr size_t kStack = 128 * 1024;
constexpr int kWarp = 32;
constexpr size_t kGatherBytes = 64;

enum class Wait { none, block, warp, done };

struct Fiber {
#if defined(__x86_64__)
  void* sp = nullptr;  // its saved stack pointer while it is not running
#else
  ucontext_t ctx;
#endif
  bool started = false;
  std::unique_ptr<char[]> stack;
  ThreadIndex index;
  Wait wait = Wait::none;
  int warp = 0, lane = 0;
  size_t static_calls = 0;  // how many SW_SHARED_ARRAY declarations this thread has passed
};

struct Block {
  std::vector<Fiber*> fibers;
  std::vector<unsigned char> dynamic;
  std::vector<std::vector<unsigned char>> statics;
  std::vector<uint64_t> exchange;  // one slot per thread
  std::vector<unsigned> ballots;   // one per warp
  std::vector<unsigned char> gather;  // kGatherBytes per thread
  const std::function<void()>* body = nullptr;
  const char* name = "";
};

// The emulator runs one kernel at a time (the backend's stream is in order); a mutex keeps two
// models on two threads from interleaving their launches.
std::mutex g_launch;
std::vector<std::unique_ptr<Fiber>> g_pool;
#if defined(__x86_64__)
void* g_scheduler_sp = nullptr;
#else
ucontext_t g_scheduler;
#endif
Block* g_block = nullptr;
Fiber* g_current = nullptr;

// A kernel bug found inside a fiber: exceptions cannot unwind across a fiber's entry.
[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "CUDA emulator: %s: %s\n", g_block ? g_block->name : "?", what.c_str());
  std::abort();
}

// A fiber's life: the current block's body, again and again.
[[noreturn]] void entry();

#if defined(__x86_64__)
}  // namespace
}  // namespace sw::emu
// Saves the callee-saved registers on the current stack and its pointer in *from, then continues
// on the stack `to` (as saved by an earlier switch, or prepared by resume()).
extern "C" void sw_emu_switch(void** from, void* to);
asm(R"(
  .text
  .globl sw_emu_switch
  .type sw_emu_switch, @function
sw_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size sw_emu_switch, .-sw_emu_switch
)");
namespace sw::emu {
namespace {

void to_scheduler(Fiber* f) { sw_emu_switch(&f->sp, g_scheduler_sp); }

// Runs fiber f until it waits or ends.
void resume(Fiber* f) {
  g_current = f;
  if (!f->started) {
    // A stack that "returns" into entry: six zeroed registers, entry's address, then a slot so
    // that entry starts with the stack aligned as after a call.
    f->started = true;
    auto top = reinterpret_cast<uintptr_t>(f->stack.get() + kStack) & ~uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top) - 8;
    for (int i = 0; i < 6; i++) sp[i] = nullptr;
    sp[6] = reinterpret_cast<void*>(&entry);
    sp[7] = nullptr;
    f->sp = sp;
  }
  sw_emu_switch(&g_scheduler_sp, f->sp);
}
#else
void to_scheduler(Fiber* f) { swapcontext(&f->ctx, &g_scheduler); }

void resume(Fiber* f) {
  g_current = f;
  if (!f->started) {
    f->started = true;
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack.get();
    f->ctx.uc_stack.ss_size = kStack;
    f->ctx.uc_link = nullptr;  // entry never returns
    makecontext(&f->ctx, entry, 0);
  }
  swapcontext(&g_scheduler, &f->ctx);
}
#endif

void entry() {
  for (;;) {
    (*g_block->body)();
    g_current->wait = Wait::done;
    to_scheduler(g_current);
  }
}

void yield(Wait w) {
  Fiber* f = g_current;
  f->wait = w;
  to_scheduler(f);
}

bool reverse_order() {
  static const bool rev = [] {
    const char* e = std::getenv("SW_EMULATOR_ORDER");
    return e && std::string(e) == "reverse";
  }();
  return rev;
}

size_t memory_total() {
  static const size_t total = [] {
    const char* e = std::getenv("SW_EMULATOR_MEMORY");
    return e ? static_cast<size_t>(std::strtoull(e, nullptr, 10)) : (size_t(4) << 30);
  }();
  return total;
}

std::mutex g_alloc_lock;
std::map<void*, size_t> g_allocs;
size_t g_allocated = 0;

}  // namespace

const ThreadIndex& current() { return g_current->index; }

void syncthreads() { yield(Wait::block); }
void syncwarp() { yield(Wait::warp); }

uint64_t exchange(uint64_t value, int lane, bool xor_mask) {
  Fiber* f = g_current;
  const size_t base = static_cast<size_t>(f->warp) * kWarp;
  g_block->exchange[base + f->lane] = value;
  yield(Wait::warp);
  const int src = xor_mask ? (f->lane ^ lane) : lane;
  if (src < 0 || src >= kWarp) die("shuffle from a lane outside the warp");
  const uint64_t out = g_block->exchange[base + src];
  yield(Wait::warp);  // nobody overwrites a slot before every lane has read
  return out;
}

unsigned ballot(bool pred) {
  Fiber* f = g_current;
  if (f->lane == 0) g_block->ballots[f->warp] = 0;
  yield(Wait::warp);
  if (pred) g_block->ballots[f->warp] |= 1u << f->lane;
  yield(Wait::warp);
  const unsigned out = g_block->ballots[f->warp];
  yield(Wait::warp);
  return out;
}

int lane_id() { return g_current->lane; }

void warp_gather(const void* mine, void* all, size_t bytes) {
  if (bytes > kGatherBytes) die("warp_gather moves at most 64 bytes a lane");
  Fiber* f = g_current;
  unsigned char* base = g_block->gather.data() + static_cast<size_t>(f->warp) * kWarp * kGatherBytes;
  std::memcpy(base + static_cast<size_t>(f->lane) * kGatherBytes, mine, bytes);
  yield(Wait::warp);
  for (int l = 0; l < kWarp; l++) std::memcpy(static_cast<unsigned char*>(all) + static_cast<size_t>(l) * bytes, base + static_cast<size_t>(l) * kGatherBytes, bytes);
  yield(Wait::warp);  // nobody overwrites a slot before every lane has read
}

void* dynamic_shared() { return g_block->dynamic.data(); }

void* static_shared(size_t bytes) {
  Fiber* f = g_current;
  const size_t k = f->static_calls++;
  if (k == g_block->statics.size()) g_block->statics.emplace_back(bytes, 0xff);
  if (g_block->statics[k].size() != bytes) die("threads declared different shared arrays");
  return g_block->statics[k].data();
}

void launch(const char* name, dim3 grid, dim3 block, size_t shared_bytes, const std::function<void()>& body) {
  std::lock_guard<std::mutex> lock(g_launch);
  const size_t n = static_cast<size_t>(block.x) * block.y * block.z;
  if (n == 0 || n > 1024) throw std::invalid_argument(std::string(name) + ": a block has 1 to 1024 threads");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) throw std::invalid_argument(std::string(name) + ": empty grid");
  if (shared_bytes > 227 * 1024) throw std::invalid_argument(std::string(name) + ": more dynamic shared memory than a Hopper block has");
  while (g_pool.size() < n) {
    auto f = std::make_unique<Fiber>();
    f->stack.reset(new char[kStack]);
    g_pool.push_back(std::move(f));
  }
  Block b;
  b.body = &body;
  b.name = name;
  b.exchange.assign(n, 0);
  b.ballots.assign((n + kWarp - 1) / kWarp, 0);
  b.gather.assign(((n + kWarp - 1) / kWarp) * kWarp * kGatherBytes, 0);
  for (size_t i = 0; i < n; i++) b.fibers.push_back(g_pool[i].get());
  const int warps = static_cast<int>((n + kWarp - 1) / kWarp);
  g_block = &b;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        b.dynamic.assign(shared_bytes, 0xff);
        b.statics.clear();
        for (size_t i = 0; i < n; i++) {
          Fiber* f = b.fibers[i];
          f->index.thread = dim3(static_cast<unsigned>(i % block.x), static_cast<unsigned>(i / block.x % block.y),
                                 static_cast<unsigned>(i / (static_cast<size_t>(block.x) * block.y)));
          f->index.block = dim3(bx, by, bz);
          f->index.block_dim = block;
          f->index.grid_dim = grid;
          f->wait = Wait::none;
          f->warp = static_cast<int>(i / kWarp);
          f->lane = static_cast<int>(i % kWarp);
          f->static_calls = 0;
        }
        for (;;) {
          for (size_t k = 0; k < n; k++) {
            Fiber* f = b.fibers[reverse_order() ? n - 1 - k : k];
            if (f->wait == Wait::none) resume(f);
          }
          // Open the barriers every live thread has reached: the block's, or a warp's.
          size_t live = 0, at_block = 0;
          for (Fiber* f : b.fibers) {
            if (f->wait == Wait::done) continue;
            live++;
            at_block += f->wait == Wait::block;
          }
          if (live == 0) break;
          bool opened = false;
          if (at_block == live) {
            // CUDA wants every thread of the block at each __syncthreads (no early exits before one).
            if (live != n) die("some threads ended before a __syncthreads the others wait at");
            for (Fiber* f : b.fibers)
              if (f->wait == Wait::block) f->wait = Wait::none;
            opened = true;
          } else {
            for (int w = 0; w < warps; w++) {
              size_t wl = 0, ww = 0;
              for (size_t i = static_cast<size_t>(w) * kWarp; i < std::min(n, static_cast<size_t>(w + 1) * kWarp); i++) {
                if (b.fibers[i]->wait == Wait::done) continue;
                wl++;
                ww += b.fibers[i]->wait == Wait::warp;
              }
              if (wl > 0 && ww == wl) {
                // A shuffle or ballot with the full mask needs all 32 lanes.
                if (wl != std::min(n, static_cast<size_t>(w + 1) * kWarp) - static_cast<size_t>(w) * kWarp)
                  die("a warp exchange while some lanes of the warp have ended");
                for (size_t i = static_cast<size_t>(w) * kWarp; i < std::min(n, static_cast<size_t>(w + 1) * kWarp); i++)
                  if (b.fibers[i]->wait == Wait::warp) b.fibers[i]->wait = Wait::none;
                opened = true;
              }
            }
          }
          if (!opened) {
            g_block = nullptr;
            g_pool.clear();  // the fibers are stuck mid-kernel: start new ones next time
            throw std::logic_error(std::string(name) + ": deadlock in block (" + std::to_string(bx) + ", " + std::to_string(by) + ", " +
                                   std::to_string(bz) + "): threads wait at different barriers (a __syncthreads some threads skip?)");
          }
        }
      }
  g_block = nullptr;
  g_current = nullptr;
}

// ---- runtime ----

}  // namespace sw::emu

using namespace sw::emu;

struct EmuStream {};
struct EmuEvent {
  std::chrono::steady_clock::time_point t;
};

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    default:
      return "unknown error";
  }
}

cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidValue; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  std::memset(p, 0, sizeof(*p));
  std::snprintf(p->name, sizeof(p->name), "CUDA emulator (host)");
  p->totalGlobalMem = memory_total();
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 4;
  p->sharedMemPerBlockOptin = 227 * 1024;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(g_alloc_lock);
  *total_bytes = memory_total();
  *free_bytes = g_allocated < *total_bytes ? *total_bytes - g_allocated : 0;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_alloc_lock);
  if (g_allocated + bytes > memory_total()) return cudaErrorMemoryAllocation;
  const size_t rounded = std::max<size_t>(256, (bytes + 255) / 256 * 256);
  void* q = std::aligned_alloc(256, rounded);
  if (!q) return cudaErrorMemoryAllocation;
  std::memset(q, 0xff, rounded);  // NaN bytes: reading memory nothing wrote poisons the result
  g_allocs[q] = bytes;
  g_allocated += bytes;
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  std::lock_guard<std::mutex> lock(g_alloc_lock);
  auto it = g_allocs.find(p);
  if (it == g_allocs.end()) return cudaErrorInvalidValue;
  g_allocated -= it->second;
  g_allocs.erase(it);
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, size_t bytes) {
  *p = std::malloc(std::max<size_t>(bytes, 1));
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeHost(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) {
  if (bytes) std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) { return cudaMemcpyAsync(dst, src, bytes, kind, nullptr); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = new EmuStream();
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new EmuEvent();
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  e->t = std::chrono::steady_clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
  return cudaSuccess;
}

// ---- cuBLAS ----

namespace sw::emu {
namespace {
constexpr int kOpN = 0, kOpT = 1;
constexpr int kR32F = 0, kR16BF = 14;

float load(const void* p, int type, size_t i) {
  if (type == kR32F) return static_cast<const float*>(p)[i];
  uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[i]) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
}  // namespace

int cublas_create(void** handle) {
  *handle = new int(0);
  return 0;
}
int cublas_destroy(void* handle) {
  delete static_cast<int*>(handle);
  return 0;
}
int cublas_set_stream(void*, cudaStream_t) { return 0; }
int cublas_set_math_mode(void*, int) { return 0; }

// C = alpha op(A) op(B) + beta C, column-major, with the library's argument checks
// (CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_NOT_SUPPORTED = 15).
int cublas_gemm_ex(void*, int transa, int transb, int m, int n, int k, const void* alpha, const void* A, int atype, int lda, const void* B,
                   int btype, int ldb, const void* beta, void* C, int ctype, int ldc, int, int) {
  if (m < 0 || n < 0 || k < 0) return 7;
  if ((transa != kOpN && transa != kOpT) || (transb != kOpN && transb != kOpT)) return 7;
  if (lda < std::max(1, transa == kOpN ? m : k) || ldb < std::max(1, transb == kOpN ? k : n) || ldc < std::max(1, m)) return 7;
  if ((atype != kR32F && atype != kR16BF) || btype != atype || ctype != kR32F) return 15;
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  float* c = static_cast<float*>(C);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) {
        const float x = load(A, atype, transa == kOpN ? static_cast<size_t>(i) + static_cast<size_t>(p) * lda : static_cast<size_t>(p) + static_cast<size_t>(i) * lda);
        const float y = load(B, btype, transb == kOpN ? static_cast<size_t>(p) + static_cast<size_t>(j) * ldb : static_cast<size_t>(j) + static_cast<size_t>(p) * ldb);
        s += static_cast<double>(x) * y;
      }
      float& out = c[static_cast<size_t>(i) + static_cast<size_t>(j) * ldc];
      out = static_cast<float>(a * s + (b == 0.0f ? 0.0 : static_cast<double>(b) * out));
    }
  return 0;
}

}  // namespace sw::emu

#endif  // SW_CUDA_EMULATOR
