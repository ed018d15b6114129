// The command streamer block (docs/commands.md).
#include "cs.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "regs.h"
#include "zs/hw_if.h"
#include "zs/oa_report.h"

namespace zesim {

namespace {

struct CmdInfo {
    uint8_t op;
    uint8_t len;
    const char *name;
};

const CmdInfo kCmds[] = {
#define ZE_CMD(name, op, dwords, desc) {op, dwords, #name},
#include "zs/gpu_cmds.def"
#undef ZE_CMD
};

const CmdInfo *cmd_info(uint32_t op)
{
    for (const CmdInfo &c : kCmds)
        if (c.op == op)
            return &c;
    return nullptr;
}

constexpr uint64_t kCommandCycles = 4;   // fetch + decode of one command
constexpr uint64_t kWalkerCycles = 32;   // walker setup
constexpr unsigned kCommandsPerStep = 64;

}  // namespace

CommandStreamer::CommandStreamer(const GtConfig &cfg, PhysMem &mem, Gt &gt, std::function<void(uint32_t)> irq,
                                 std::function<void(uint32_t, uint32_t)> load_register,
                                 std::function<void(uint32_t, uint32_t *)> oa_report)
    : cfg_(cfg), mem_(mem), gt_(gt), irq_(std::move(irq)), load_register_(std::move(load_register)),
      oa_report_(std::move(oa_report))
{
    unsigned n;
    const RegInfo *t = reg_table(&n);
    for (unsigned i = 0; i < n; i++)
        if (block_of(t[i].off) == Block::CommandStreamer)
            regs_[t[i].off] = t[i].reset;
}

uint32_t CommandStreamer::reg(uint32_t off) const
{
    auto it = regs_.find(off);
    return it == regs_.end() ? 0 : it->second;
}

uint64_t CommandStreamer::timestamp() const
{
    return gt_.now() * cfg_.timestamp_khz / (uint64_t(cfg_.core_mhz) * 1000);
}

uint32_t CommandStreamer::read(uint32_t off)
{
    switch (off) {
    case ZS_REG_CTX_IMAGES:
        return uint32_t(images_.size());
    case ZS_REG_WALKER_KERNEL_LO:
        return uint32_t(gt_.current_kernel());
    case ZS_REG_WALKER_KERNEL_HI:
        return uint32_t(gt_.current_kernel() >> 32);
    case ZS_REG_ENGINE_STATUS:
        switch (cs_) {
        case Cs::Idle: return gt_.busy() ? ZS_ENGINE_BUSY : ZS_ENGINE_IDLE;
        case Cs::WaitSemaphore: return ZS_ENGINE_WAITING;
        case Cs::Error: return ZS_ENGINE_ERROR;
        default: return ZS_ENGINE_BUSY;
        }
    default:
        return reg(off);
    }
}

void CommandStreamer::write(uint32_t off, uint32_t value)
{
    switch (off) {
    case ZS_REG_ENGINE_ERROR_CLEAR:
        if ((value & 1) && cs_ == Cs::Error) {
            set_reg(ZS_REG_ENGINE_ERROR, 0);
            cs_ = in_batch_ ? Cs::Fetch : Cs::Idle;  // from the ring: validated again
        }
        return;
    case ZS_REG_ENGINE_RESET:
        if (value & 1) {
            gt_.reset();
            cs_ = Cs::Idle;
            in_batch_ = false;
            batch_ended_ = false;
            set_reg(ZS_REG_ENGINE_ERROR, 0);
            set_reg(ZS_REG_RING_CTL, 0);
            set_reg(ZS_REG_RING_HEAD, reg(ZS_REG_RING_TAIL));
            was_busy_ = false;
        }
        return;
    case ZS_REG_CS_PREEMPT: {
        // Bit 0: a semaphore wait inside a batch is a safe point: the batch
        // resumes by re-executing that command (a BATCH_START to it).  Bit 1:
        // any point inside a batch, with the GT's state saved for the
        // context (docs/commands.md §8): the batch resumes at the next
        // command, or re-executes the post-sync command or semaphore wait it
        // was at, once CTX_ID has brought the state back.
        set_reg(ZS_REG_PREEMPT_ADDR_LO, 0);
        set_reg(ZS_REG_PREEMPT_ADDR_HI, 0);
        set_reg(ZS_REG_PREEMPT_STATUS, 0);
        const bool at_wait = (value & 1) && cs_ == Cs::WaitSemaphore && in_batch_;
        const bool anywhere = (value & 2) && (cs_ == Cs::Fetch || cs_ == Cs::WaitIdle || cs_ == Cs::WaitSemaphore ||
                                              (cs_ == Cs::Idle && gt_.busy()));
        if (!at_wait && !anywhere)
            return;
        if (anywhere && gt_.busy())
            images_[reg(ZS_REG_CTX_ID)] = gt_.save_context();
        if (in_batch_) {
            const uint64_t resume = cs_ == Cs::Fetch ? batch_addr_ : cmd_addr_;
            set_reg(ZS_REG_PREEMPT_ADDR_LO, uint32_t(resume));
            set_reg(ZS_REG_PREEMPT_ADDR_HI, uint32_t(resume >> 32));
            set_reg(ZS_REG_PREEMPT_STATUS, 1);
        } else {
            set_reg(ZS_REG_PREEMPT_STATUS, batch_ended_ ? 2 : 3);
        }
        set_reg(ZS_REG_RING_HEAD, reg(ZS_REG_RING_TAIL));
        in_batch_ = false;
        batch_ended_ = false;
        cs_ = Cs::Idle;
        return;
    }
    case ZS_REG_CTX_ID: {
        set_reg(off, value);
        auto it = images_.find(value);
        if (it != images_.end() && !gt_.busy()) {
            gt_.restore_context(std::move(it->second));
            images_.erase(it);
        }
        return;
    }
    case ZS_REG_CTX_DISCARD:
        images_.erase(value);
        return;
    case ZS_REG_RING_CTL:
        if ((value & 1) && !(reg(off) & 1)) {
            set_reg(ZS_REG_RING_HEAD, 0);
            in_batch_ = false;
            batch_ended_ = false;
            if (cs_ != Cs::Error)
                cs_ = Cs::Idle;
        }
        set_reg(off, value & 1);
        return;
    default:
        set_reg(off, value);
    }
}

bool CommandStreamer::take_went_idle()
{
    if (was_busy_ && cs_ == Cs::Idle && !busy()) {
        was_busy_ = false;
        return true;
    }
    return false;
}

void CommandStreamer::engine_error(uint32_t reason, uint64_t addr, const std::string &why)
{
    set_reg(ZS_REG_ENGINE_ERROR, reason);
    set_reg(ZS_REG_ENGINE_ERROR_ADDR_LO, uint32_t(addr));
    set_reg(ZS_REG_ENGINE_ERROR_ADDR_HI, uint32_t(addr >> 32));
    error_text_ = why;
    cs_ = Cs::Error;
    irq_(ZS_IRQ_ENGINE_ERROR);
}

bool CommandStreamer::fetch_dword(uint64_t addr, bool in_batch, uint32_t &out)
{
    if (in_batch)
        return read_va(addr, out);
    if (!mem_.contains(addr, 4))
        return false;
    out = mem_.read32(addr);
    return true;
}

bool CommandStreamer::read_va(uint64_t va, uint32_t &out)
{
    Translation tr = gt_.mmu().translate(pt_root(), va, false);
    if (tr.fault != FaultReason::None || (va & 3))
        return false;
    out = mem_.read32(tr.pa);
    return true;
}

bool CommandStreamer::write_va(uint64_t va, const uint32_t *dw, unsigned n, bool wake)
{
    uint64_t pa[4];
    for (unsigned i = 0; i < n; i++) {
        Translation tr = gt_.mmu().translate(pt_root(), va + 4 * i, true);
        if (tr.fault != FaultReason::None || (va & 3))
            return false;
        pa[i] = tr.pa;
    }
    for (unsigned i = 0; i < n; i++)
        mem_.write32(pa[i], dw[i]);
    if (wake)
        wake_host(pa[0]);
    return true;
}

bool CommandStreamer::write_qword(uint64_t va, uint64_t v)
{
    if (va & 7)
        return false;
    Translation tr = gt_.mmu().translate(pt_root(), va, true);
    if (tr.fault != FaultReason::None)
        return false;
    __atomic_store_n(reinterpret_cast<uint64_t *>(mem_.base() + tr.pa), v, __ATOMIC_RELEASE);
    wake_host(tr.pa);
    return true;
}

// A STORE_DATA may be what a host thread waits for (the driver's host operations
// sleep on their rendezvous word, docs/uapi.md §15): wake the futex waiters of the
// written word (host time only; nothing simulated changes).
void CommandStreamer::wake_host(uint64_t pa)
{
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(mem_.base() + pa), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

bool CommandStreamer::ring_valid()
{
    const uint64_t base = uint64_t(reg(ZS_REG_RING_BASE_HI)) << 32 | reg(ZS_REG_RING_BASE_LO);
    const uint32_t size = reg(ZS_REG_RING_SIZE), tail = reg(ZS_REG_RING_TAIL), head = reg(ZS_REG_RING_HEAD);
    if ((base & 0xfff) || size < 4096 || size > (1u << 20) || (size & (size - 1)) || !mem_.contains(base, size) ||
        tail >= size || (tail & 3) || head >= size) {
        engine_error(ZS_ERR_BAD_RING, base, "ring base/size/tail invalid");
        return false;
    }
    return true;
}

bool CommandStreamer::semaphore_satisfied()
{
    uint32_t v;
    if (!read_va(uint64_t(pending_[1]) | uint64_t(pending_[2]) << 32, v))
        return true;  // reported as an error by cs_step
    const uint32_t want = pending_[3], op = pending_[4];
    return op == 0 ? v == want : op == 1 ? v != want : op == 2 ? v >= want : v < want;
}

uint32_t *CommandStreamer::waited_word(uint32_t &now)
{
    if (cs_ != Cs::WaitSemaphore)
        return nullptr;
    const uint64_t va = uint64_t(pending_[1]) | uint64_t(pending_[2]) << 32;
    Translation tr = gt_.mmu().translate(pt_root(), va, false);
    if (tr.fault != FaultReason::None || (va & 3) || !mem_.contains(tr.pa, 4))
        return nullptr;
    uint32_t *p = reinterpret_cast<uint32_t *>(mem_.base() + tr.pa);
    now = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    return p;
}

uint64_t CommandStreamer::step()
{
    uint64_t spent = 0;
    const uint32_t *p = pending_;
    auto addr64 = [&](unsigned i) { return uint64_t(p[i]) | uint64_t(p[i + 1]) << 32; };

    if (cs_ == Cs::Error)
        return 0;
    if (cs_ == Cs::Idle) {
        if (!(reg(ZS_REG_RING_CTL) & 1) || reg(ZS_REG_RING_HEAD) == reg(ZS_REG_RING_TAIL))
            return 0;
        if (!ring_valid())
            return 0;
        cs_ = Cs::Fetch;
    }
    for (unsigned n = 0; n < kCommandsPerStep; n++) {
        if (cs_ == Cs::WaitIdle) {
            if (gt_.busy())
                return spent;
            // Post-sync commands run once all earlier work has completed.
            const uint64_t ts = timestamp();
            const uint32_t op = p[0] >> 24;
            bool ok = true;
            if (op == ZS_CMD_STORE_DATA) {
                ok = write_va(addr64(1), &p[3], 1, true);
            } else if (op == ZS_CMD_STORE_DATA64) {
                ok = write_qword(addr64(1), uint64_t(p[3]) | uint64_t(p[4]) << 32);
            } else if (op == ZS_CMD_TIMESTAMP_WRITE) {
                const uint32_t v[2] = {uint32_t(ts), uint32_t(ts >> 32)};
                ok = write_va(addr64(1), v, 2);
            } else if (op == ZS_CMD_REPORT_PERF_COUNT) {
                // The whole report or nothing: every page of it must be writable.
                const uint64_t va = addr64(1);
                uint32_t report[ZS_OA_REPORT_DWORDS];
                ok = !(va & 63);
                for (unsigned i = 0; ok && i < ZS_OA_REPORT_DWORDS; i += 16)
                    ok = gt_.mmu().translate(pt_root(), va + 4 * i, true).fault == FaultReason::None;
                if (ok) {
                    oa_report_(p[3], report);
                    for (unsigned i = 0; ok && i < ZS_OA_REPORT_DWORDS; i += 4)
                        ok = write_va(va + 4 * i, report + i, 4);
                }
            } else if (op == ZS_CMD_USER_INTERRUPT) {
                irq_(ZS_IRQ_USER);
            }
            cs_ = Cs::Fetch;
            if (!ok) {
                engine_error(ZS_ERR_BAD_ADDRESS, cmd_addr_, "post-sync write to an unmapped or read-only address");
                return spent;
            }
        }
        if (cs_ == Cs::WaitSemaphore) {
            uint32_t v;
            if (!read_va(addr64(1), v)) {
                engine_error(ZS_ERR_BAD_ADDRESS, cmd_addr_, "semaphore address not mapped");
                return spent;
            }
            if (!semaphore_satisfied())
                return spent;
            cs_ = Cs::Fetch;
        }
        if (!in_batch_ && !(reg(ZS_REG_RING_CTL) & 1)) {
            cs_ = Cs::Idle;  // the ring was disabled: stop at a command boundary
            return spent;
        }
        // Fetch the next command from the batch or the ring.
        const uint64_t ring = uint64_t(reg(ZS_REG_RING_BASE_HI)) << 32 | reg(ZS_REG_RING_BASE_LO);
        const uint32_t size = reg(ZS_REG_RING_SIZE);
        uint32_t head = reg(ZS_REG_RING_HEAD);
        if (!in_batch_ && head == reg(ZS_REG_RING_TAIL)) {
            cs_ = Cs::Idle;
            return spent;
        }
        if (!in_batch_ && !ring_valid())
            return spent;
        cmd_addr_ = in_batch_ ? batch_addr_ : ring + head;
        uint32_t hdr;
        if (!fetch_dword(cmd_addr_, in_batch_, hdr)) {
            engine_error(ZS_ERR_FETCH_FAULT, cmd_addr_, "command fetch from an unmapped address");
            return spent;
        }
        const uint32_t op = hdr >> 24, len = hdr & 0xffff;
        const CmdInfo *ci = cmd_info(op);
        auto advance = [&](uint32_t dwords) {
            if (in_batch_)
                batch_addr_ += 4ull * dwords;
            else
                set_reg(ZS_REG_RING_HEAD, (head + 4 * dwords) & (size - 1));
        };
        if (!ci) {
            advance(1);
            engine_error(ZS_ERR_UNKNOWN_OPCODE, cmd_addr_, "unknown command opcode " + std::to_string(op));
            return spent;
        }
        if (hdr & 0x00ff0000u) {
            advance(ci->len);
            engine_error(ZS_ERR_RESERVED_BITS, cmd_addr_, std::string(ci->name) + ": reserved header bits set");
            return spent;
        }
        if (len != ci->len) {
            advance(ci->len);
            engine_error(ZS_ERR_BAD_LENGTH, cmd_addr_,
                         std::string(ci->name) + ": length " + std::to_string(len) + ", expected " +
                             std::to_string(ci->len));
            return spent;
        }
        pending_[0] = hdr;
        pending_len_ = len;
        for (uint32_t i = 1; i < len; i++) {
            const uint64_t a = in_batch_ ? cmd_addr_ + 4 * i : ring + ((head + 4 * i) & (size - 1));
            if (!fetch_dword(a, in_batch_, pending_[i])) {
                engine_error(ZS_ERR_FETCH_FAULT, a, "command fetch from an unmapped address");
                return spent;
            }
        }
        advance(len);
        spent += kCommandCycles;
        switch (op) {
        case ZS_CMD_NOOP:
            break;
        case ZS_CMD_BATCH_START:
            if (in_batch_) {
                engine_error(ZS_ERR_NESTED_BATCH, cmd_addr_, "BATCH_START inside a batch");
                return spent;
            }
            in_batch_ = true;
            batch_ended_ = false;
            batch_addr_ = addr64(1);
            break;
        case ZS_CMD_BATCH_END:
            if (!in_batch_) {
                engine_error(ZS_ERR_NESTED_BATCH, cmd_addr_, "BATCH_END outside a batch");
                return spent;
            }
            in_batch_ = false;
            batch_ended_ = true;
            break;
        case ZS_CMD_COMPUTE_WALKER: {
            WalkerJob w;
            w.pt_root = pt_root();
            w.kernel_va = addr64(1);
            w.simd = p[3];
            w.grf = p[4];
            w.slm = p[5];
            for (int i = 0; i < 3; i++) {
                w.group_size[i] = p[6 + i];
                w.group_count[i] = p[9 + i];
            }
            w.args_va = addr64(12);
            w.arg_bytes = p[14];
            std::string err = p[15] ? "reserved dword set" : w.grf < 1 || w.grf > 128 ? "GRF count out of range" : gt_.submit(w);
            if (!err.empty()) {
                engine_error(ZS_ERR_BAD_WALKER, cmd_addr_, "COMPUTE_WALKER: " + err);
                return spent;
            }
            spent += kWalkerCycles;
            break;
        }
        case ZS_CMD_STORE_DATA:
        case ZS_CMD_STORE_DATA64:
        case ZS_CMD_TIMESTAMP_WRITE:
        case ZS_CMD_REPORT_PERF_COUNT:
        case ZS_CMD_USER_INTERRUPT:
            cs_ = Cs::WaitIdle;
            return spent;  // time advances by the command's cost before it takes effect
        case ZS_CMD_LOAD_REGISTER_IMM: {
            // Batches come from user space: they may only load the scratch
            // registers; the ring (the KMD's) may load any RW register but RING_CTL.
            const RegInfo *r = reg_info(p[1]);
            // OA_MARKER (write-only) is the one register of another block a batch may
            // load: the stream markers of the metrics API.
            const bool marker = p[1] == ZS_REG_OA_MARKER;
            const bool user_ok = p[1] == ZS_REG_SCRATCH0 || p[1] == ZS_REG_SCRATCH1 || marker;
            if (!r || (r->access != RW && !marker) || p[1] == ZS_REG_RING_CTL || (in_batch_ && !user_ok)) {
                engine_error(ZS_ERR_BAD_REGISTER, cmd_addr_,
                             in_batch_ ? "LOAD_REGISTER_IMM in a batch to a privileged register"
                                       : "LOAD_REGISTER_IMM to a register that is not RW");
                return spent;
            }
            load_register_(p[1], p[2]);
            break;
        }
        case ZS_CMD_SEMAPHORE_WAIT:
            if (p[4] > 3) {
                engine_error(ZS_ERR_BAD_OPERAND, cmd_addr_, "SEMAPHORE_WAIT: unknown compare " + std::to_string(p[4]));
                return spent;
            }
            cs_ = Cs::WaitSemaphore;
            break;
        }
    }
    return spent;
}

uint64_t CommandStreamer::pt_root() const
{
    return uint64_t(reg(ZS_REG_CTX_PT_ROOT_HI)) << 32 | reg(ZS_REG_CTX_PT_ROOT_LO);
}

bool CommandStreamer::busy()
{
    if (gt_.busy())
        return true;
    if (cs_ == Cs::Fetch || cs_ == Cs::WaitIdle)
        return true;
    // A semaphore wait is work only once the host has released it.
    if (cs_ == Cs::WaitSemaphore)
        return semaphore_satisfied();
    return cs_ == Cs::Idle && (reg(ZS_REG_RING_CTL) & 1) &&
           reg(ZS_REG_RING_HEAD) != reg(ZS_REG_RING_TAIL);
}

}  // namespace zesim
