// Architectural state of one EU hardware thread and the functional execution
// of ZE-ISA instructions (docs/isa.md).  This is the model's own
// implementation of the spec; the Python ISS (tests/stimulus/zeiss.py) is the
// independent oracle it is checked against.
#ifndef ZESIM_MODEL_THREAD_H
#define ZESIM_MODEL_THREAD_H

#include <array>
#include <cstdint>
#include <string>

#include "zs/ze_isa.h"

namespace zesim {

constexpr int kCfDepth = 32;
constexpr int kRetDepth = 16;

enum class ThreadStatus : uint8_t {
    Running,
    Barrier,   // waiting at a barrier
    Done,      // EOT
    Halted,    // halt instruction
    Exception, // ended by an exception (no SIP installed)
    DebugWait, // `halt` in the system routine (or a debug stop without it): in attention until resumed
};

struct CfEntry {
    uint8_t loop;  // 0 = IF, 1 = LOOP
    uint32_t saved;
    uint32_t cont;
};

struct ThreadState {
    uint32_t grf[ZE_GRF_COUNT][8];
    uint32_t f[2];
    uint32_t a0[8];
    uint32_t acc[2][16];
    uint32_t sr0[4];
    uint32_t cr0[4];
    uint32_t tdr[8];
    uint32_t dbg0[2];
    uint32_t ce;
    uint32_t ip;            // offset from ib (docs/isa.md section 1)
    uint64_t ib;            // instruction base: the kernel's entry, or a calla target (section 3.5)
    CfEntry cf[kCfDepth];
    int ncf;
    uint32_t ret[kRetDepth];
    uint64_t ret_ib[kRetDepth];  // the instruction base each return goes back to
    int nret;
    ThreadStatus status;
    uint64_t instructions;  // executed, for statistics
    uint64_t cycle;         // GT cycle of the current instruction: tm0 reads it
    uint8_t sip_en;         // DBG_MODE.SIP_EN at dispatch: enabled exceptions enter the SIP
    uint8_t in_sip;         // running the system routine (ip is an offset in it)
    uint8_t raised;         // the exception bit raised last

    void reset();
    // Raise exception `bit` (enum ze_exception) at the current ip.
    void raise(unsigned bit, uint32_t address = 0);
};

// A decoded kernel instruction plus what the timing model needs.
struct DecodedInst {
    ze_inst_t in;
    uint8_t lat_class;  // enum ze_lat
    uint8_t valid;      // 0: illegal encoding (raises on execution)
    // GRF ranges for the scoreboard: registers [lo, lo + n) per source slot
    // and for the destination; flags as bit masks (bit 0 = f0, bit 1 = f1).
    uint8_t rd_lo[3], rd_n[3];
    uint8_t wr_lo, wr_n;
    uint8_t flag_rd, flag_wr;
};

DecodedInst decode_for_model(const uint8_t bytes[ZE_INST_BYTES]);

// Outcome of executing one non-send instruction.
enum class StepResult : uint8_t {
    Next,       // fall through (ip advanced)
    Jumped,     // ip changed by control flow
    Send,       // a send: the caller (memory system) performs it
    Stopped,    // thread stopped (halt / exception)
    SipRet,     // `sipret` in the system routine: the caller reloads the state from the slot
};

// Raise a breakpoint exception for an instruction with BP set, unless dbg0.0
// bit 0 suppresses it (once).  Returns true when the thread stopped.
bool check_breakpoint(ThreadState &t, const DecodedInst &d);

// Execute one instruction; for a send only the breakpoint check and the
// instruction count happen (StepResult::Send) and the caller performs it.  The ip is advanced or changed.
StepResult execute(ThreadState &t, const DecodedInst &d);

// Channel-enable mask of an instruction (docs/isa.md §3.1).
uint32_t enabled_lanes(const ThreadState &t, const ze_inst_t &in);

// The 64-bit target of a `calla` (docs/isa.md section 3.5): src1 << 32 | src0, lane 0.
uint64_t calla_target(ThreadState &t, const ze_inst_t &in);

// GRF read/write helpers used by sends.
inline uint32_t lane_dword(const ThreadState &t, unsigned reg, unsigned lane)
{
    return t.grf[(reg + lane / 8) & 127][lane % 8];
}

}  // namespace zesim

#endif
