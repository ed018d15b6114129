// Physical memory (memfd, shared with clients), GPU page tables and the
// L3 / DRAM / SLM timing model (docs/memory.md).
#ifndef ZESIM_MODEL_MEMORY_H
#define ZESIM_MODEL_MEMORY_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "zs/pt_format.h"

namespace zesim {

class PhysMem {
public:
    explicit PhysMem(uint64_t bytes);
    ~PhysMem();
    PhysMem(const PhysMem &) = delete;
    PhysMem &operator=(const PhysMem &) = delete;

    uint64_t size() const { return size_; }
    int fd() const { return fd_; }
    uint8_t *base() { return base_; }
    const uint8_t *base() const { return base_; }
    bool contains(uint64_t pa, uint64_t n) const { return pa <= size_ && n <= size_ - pa; }
    uint32_t read32(uint64_t pa) const
    {
        uint32_t v;
        std::memcpy(&v, base_ + pa, 4);
        return v;
    }
    void write32(uint64_t pa, uint32_t v) { std::memcpy(base_ + pa, &v, 4); }
    uint64_t read64(uint64_t pa) const
    {
        uint64_t v;
        std::memcpy(&v, base_ + pa, 8);
        return v;
    }
    void write64(uint64_t pa, uint64_t v) { std::memcpy(base_ + pa, &v, 8); }
    // Back [pa, pa+bytes) with another memfd (a GEM object a client maps),
    // or restore the device's own backing.  Page aligned.
    bool attach(uint64_t pa, int fd, uint64_t bytes);
    bool detach(uint64_t pa, uint64_t bytes);

private:
    int fd_ = -1;
    uint64_t size_ = 0;
    uint8_t *base_ = nullptr;
};

// The page-table format and its walk are defined once, in C, for the model,
// the KMD and the stimulus runner: include/zs/pt_format.h (docs/memory.md §2).

enum class FaultReason : uint32_t {
    None = ZS_PT_OK,
    NotPresent = ZS_PT_NOT_PRESENT,
    ReadOnly = ZS_PT_READ_ONLY,
    BadPhysical = ZS_PT_BAD_PHYSICAL,
    NonCanonical = ZS_PT_NON_CANONICAL,
};

struct Translation {
    uint64_t pa;
    FaultReason fault;
    uint32_t level;  // table level where a fault happened
};

// Translates through the 4-level page table rooted at `root` (a physical
// address) with zs_pt_walk.  A small direct-mapped TLB caches 4 KiB
// translations; invalidate() drops it (the KMD does so through MMIO after
// changing page tables).
class Mmu {
public:
    explicit Mmu(const PhysMem &mem) : mem_(mem), tlb_(kTlbEntries) {}
    Translation translate(uint64_t root, uint64_t va, bool write);
    void invalidate();
    uint64_t walks() const { return walks_; }

private:
    static constexpr size_t kTlbEntries = 1024;
    struct TlbEntry {
        uint64_t tag = ~0ull;  // (root, vpn) hash key; ~0 = empty
        uint64_t root = 0;
        uint64_t ppn = 0;
        bool writable = false;
    };
    Translation walk(uint64_t root, uint64_t va, bool write, TlbEntry *fill);

    const PhysMem &mem_;
    std::vector<TlbEntry> tlb_;
    uint64_t walks_ = 0;
};

struct MemConfig {
    uint32_t l3_bytes = 512 * 1024;
    uint32_t l3_ways = 16;
    uint32_t l3_latency = 50;      // cycles, hit
    uint32_t dram_latency = 150;   // cycles added on a miss
    uint32_t dram_bytes_per_cycle = 32;
    uint32_t slm_latency = 24;
    uint32_t slm_banks = 16;
    uint32_t atomic_extra = 8;     // cycles an atomic adds to its memory latency
};

constexpr uint32_t kLineBytes = 64;

struct MemStats {
    uint64_t l3_hits = 0, l3_misses = 0;
    uint64_t l3_bytes_read = 0, l3_bytes_written = 0;
    uint64_t dram_bytes = 0;
    uint64_t slm_bytes_read = 0, slm_bytes_written = 0;
    uint64_t slm_bank_conflict_cycles = 0;
};

// Cycle-approximate memory hierarchy shared by all sub-slices.
class MemTiming {
public:
    explicit MemTiming(const MemConfig &cfg);
    // Cycle at which an access to these 64-byte lines (physical line numbers),
    // issued at `now`, has completed.
    uint64_t global_access(uint64_t now, const uint64_t *lines, size_t n, bool write,
                           uint32_t bytes, bool atomic);
    // Cycle at which an SLM access completes; `dwords` are per-lane dword
    // addresses of the enabled channels.
    uint64_t slm_access(uint64_t now, const uint32_t *dwords, size_t n, bool write, bool atomic);
    const MemStats &stats() const { return stats_; }
    const MemConfig &config() const { return cfg_; }

private:
    bool l3_lookup(uint64_t line);

    MemConfig cfg_;
    uint32_t sets_;
    std::vector<uint64_t> tags_;   // sets_ * ways, ~0 = invalid
    std::vector<uint64_t> stamp_;  // LRU stamps
    uint64_t tick_ = 0;
    uint64_t l3_port_free_ = 0;
    uint64_t dram_free_ = 0;
    MemStats stats_;
};

}  // namespace zesim

#endif
