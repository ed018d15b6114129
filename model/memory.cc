#include "memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace zesim {

PhysMem::PhysMem(uint64_t bytes) : size_(bytes)
{
    fd_ = memfd_create("zesim-phys", MFD_CLOEXEC);
    if (fd_ < 0)
        throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
    if (ftruncate(fd_, off_t(bytes)) != 0) {
        close(fd_);
        throw std::runtime_error(std::string("ftruncate physical memory: ") + std::strerror(errno));
    }
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
        close(fd_);
        throw std::runtime_error(std::string("mmap physical memory: ") + std::strerror(errno));
    }
    base_ = static_cast<uint8_t *>(p);
}

PhysMem::~PhysMem()
{
    if (base_)
        munmap(base_, size_);
    if (fd_ >= 0)
        close(fd_);
}

bool PhysMem::attach(uint64_t pa, int fd, uint64_t bytes)
{
    if ((pa | bytes) & 0xfff || !contains(pa, bytes))
        return false;
    return mmap(base_ + pa, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
}

bool PhysMem::detach(uint64_t pa, uint64_t bytes)
{
    if ((pa | bytes) & 0xfff || !contains(pa, bytes))
        return false;
    return mmap(base_ + pa, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_, off_t(pa)) != MAP_FAILED;
}

Translation Mmu::walk(uint64_t root, uint64_t va, bool write, TlbEntry *fill)
{
    walks_++;
    zs_pt_walk_result_t r;
    zs_pt_walk(mem_.base(), mem_.size(), root, va, write, &r);
    if (r.fault != ZS_PT_OK)
        return {0, FaultReason(r.fault), r.level};
    if (fill) {
        fill->root = root;
        fill->ppn = r.pa >> 12;
        fill->writable = r.writable != 0;
    }
    return {r.pa, FaultReason::None, 0};
}

Translation Mmu::translate(uint64_t root, uint64_t va, bool write)
{
    if (!zs_pt_canonical(va))
        return {0, FaultReason::NonCanonical, 3};
    const uint64_t vpn = va >> 12;
    TlbEntry &t = tlb_[(vpn ^ (root >> 12) * 0x9e3779b1u) % kTlbEntries];
    if (t.tag == vpn && t.root == root && (!write || t.writable))
        return {(t.ppn << 12) | (va & 0xfff), FaultReason::None, 0};
    TlbEntry fresh;
    Translation tr = walk(root, va, write, &fresh);
    if (tr.fault == FaultReason::None) {
        fresh.tag = vpn;
        t = fresh;
    }
    return tr;
}

void Mmu::invalidate()
{
    std::fill(tlb_.begin(), tlb_.end(), TlbEntry{});
}

MemTiming::MemTiming(const MemConfig &cfg) : cfg_(cfg)
{
    sets_ = std::max<uint32_t>(1, cfg.l3_bytes / kLineBytes / std::max<uint32_t>(1, cfg.l3_ways));
    tags_.assign(size_t(sets_) * cfg.l3_ways, ~0ull);
    stamp_.assign(tags_.size(), 0);
}

bool MemTiming::l3_lookup(uint64_t line)
{
    const size_t set = size_t(line % sets_) * cfg_.l3_ways;
    size_t victim = set;
    tick_++;
    for (size_t w = set; w < set + cfg_.l3_ways; w++) {
        if (tags_[w] == line) {
            stamp_[w] = tick_;
            return true;
        }
        if (stamp_[w] < stamp_[victim])
            victim = w;
    }
    tags_[victim] = line;
    stamp_[victim] = tick_;
    return false;
}

uint64_t MemTiming::global_access(uint64_t now, const uint64_t *lines, size_t n, bool write,
                                  uint32_t bytes, bool atomic)
{
    uint64_t done = now;
    for (size_t i = 0; i < n; i++) {
        // Each line occupies the L3 port for one cycle.
        const uint64_t start = std::max(now, l3_port_free_);
        l3_port_free_ = start + 1;
        uint64_t ready = start + cfg_.l3_latency;
        if (l3_lookup(lines[i])) {
            stats_.l3_hits++;
        } else {
            stats_.l3_misses++;
            stats_.dram_bytes += kLineBytes;
            const uint64_t issue = std::max(start, dram_free_);
            dram_free_ = issue + (kLineBytes + cfg_.dram_bytes_per_cycle - 1) / cfg_.dram_bytes_per_cycle;
            ready = std::max(ready, issue + cfg_.l3_latency + cfg_.dram_latency);
        }
        done = std::max(done, ready);
    }
    if (write)
        stats_.l3_bytes_written += bytes;
    else
        stats_.l3_bytes_read += bytes;
    if (atomic) {
        stats_.l3_bytes_written += bytes;
        done += cfg_.atomic_extra;
    }
    return done;
}

uint64_t MemTiming::slm_access(uint64_t now, const uint32_t *dwords, size_t n, bool write, bool atomic)
{
    // Bank conflicts: each bank serves one distinct dword per cycle.
    uint32_t sorted[64 * 4];
    n = std::min(n, sizeof(sorted) / sizeof(sorted[0]));
    std::copy(dwords, dwords + n, sorted);
    std::sort(sorted, sorted + n);
    const size_t unique = size_t(std::unique(sorted, sorted + n) - sorted);
    uint32_t per_bank[64] = {};
    uint32_t worst = 0;
    const uint32_t banks = std::min<uint32_t>(64, std::max<uint32_t>(1, cfg_.slm_banks));
    for (size_t i = 0; i < unique; i++)
        worst = std::max(worst, ++per_bank[sorted[i] % banks]);
    const uint32_t extra = worst ? worst - 1 : 0;
    stats_.slm_bank_conflict_cycles += extra;
    const uint64_t bytes = uint64_t(n) * 4;
    if (write || atomic)
        stats_.slm_bytes_written += bytes;
    if (!write || atomic)
        stats_.slm_bytes_read += bytes;
    return now + cfg_.slm_latency + extra + (atomic ? cfg_.atomic_extra : 0);
}

}  // namespace zesim
