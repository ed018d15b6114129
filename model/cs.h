// The command streamer block (docs/commands.md, registers 0x1000-0x1fff of
// docs/mmio.md): the ring and batches, command execution and timing, post-sync
// writes, semaphores, COMPUTE_WALKER, engine errors, preemption and context
// switch.  It drives the GT and raises interrupts through the device.
#ifndef ZESIM_MODEL_CS_H
#define ZESIM_MODEL_CS_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "gt.h"
#include "memory.h"
#include "zs/hw_if.h"

namespace zesim {

class CommandStreamer {
public:
    // `irq` raises interrupt bits; `load_register` performs a LOAD_REGISTER_IMM
    // through the device's register map (the ring may load other blocks' RW
    // registers too).
    // `oa_report` takes a query report (REPORT_PERF_COUNT) of the OA block now.
    CommandStreamer(const GtConfig &cfg, PhysMem &mem, Gt &gt, std::function<void(uint32_t)> irq,
                    std::function<void(uint32_t, uint32_t)> load_register,
                    std::function<void(uint32_t, uint32_t *)> oa_report);

    // Registers of the block (offsets of the whole map; access types are
    // checked by the device).
    uint32_t read(uint32_t off);
    void write(uint32_t off, uint32_t value);

    // Execute commands until the streamer must wait; returns cycles spent.
    uint64_t step();
    // Whether the streamer has work that makes time advance.
    bool busy();
    bool idle() const { return cs_ == Cs::Idle; }
    bool waiting_idle() const { return cs_ == Cs::WaitIdle; }
    // The 32-bit word of physical memory a false SEMAPHORE_WAIT the streamer sits
    // at compares, with its value now; nullptr when it sits at none (the daemon
    // sleeps on the word until a client wakes it, docs/daemon.md §5).
    uint32_t *waited_word(uint32_t &now);
    // Halt on an engine error (also used by the MMU block: EU_FAULT).
    void engine_error(uint32_t reason, uint64_t addr, const std::string &why);
    bool halted() const { return cs_ == Cs::Error; }
    uint32_t context() const { return reg(ZS_REG_CTX_ID); }
    // The engine went idle after having had work since the last call (for
    // the engine-idle interrupt).
    bool take_went_idle();
    void note_busy() { was_busy_ |= busy(); }
    const std::string &error_text() const { return error_text_; }
    size_t saved_contexts() const { return images_.size(); }

private:
    enum class Cs { Idle, Fetch, WaitIdle, WaitSemaphore, Error };

    uint32_t reg(uint32_t off) const;
    void set_reg(uint32_t off, uint32_t v) { regs_[off] = v; }
    bool ring_valid();
    bool semaphore_satisfied();
    bool fetch_dword(uint64_t addr, bool in_batch, uint32_t &out);
    bool write_va(uint64_t va, const uint32_t *dw, unsigned n, bool wake = false);
    void wake_host(uint64_t pa);
    bool write_qword(uint64_t va, uint64_t v);
    bool read_va(uint64_t va, uint32_t &out);
    uint64_t pt_root() const;
    uint64_t timestamp() const;

    const GtConfig &cfg_;
    PhysMem &mem_;
    Gt &gt_;
    std::function<void(uint32_t)> irq_;
    std::function<void(uint32_t, uint32_t)> load_register_;
    std::function<void(uint32_t, uint32_t *)> oa_report_;
    std::map<uint32_t, uint32_t> regs_;
    Cs cs_ = Cs::Idle;
    bool in_batch_ = false;
    bool batch_ended_ = false;  // a BATCH_END ran since the ring's last BATCH_START
    uint64_t batch_addr_ = 0;
    uint64_t cmd_addr_ = 0;  // address of the command being executed
    uint32_t pending_[16] = {};
    unsigned pending_len_ = 0;
    bool was_busy_ = false;
    std::string error_text_;
    std::map<uint32_t, Gt::Image> images_;  // contexts preempted with their GT state (CS_PREEMPT bit 1)
};

}  // namespace zesim

#endif
