// The OA block in RTL: the Verilated rtl/oa/zs_oa.sv behind the interface of its C++
// twin (model/oa_twin.h): `OaOut step(const OaIn &)` is one clock, `read(off)` the
// combinational MMIO read of the state before the next clock.  OaChecked runs the RTL
// and the twin side by side (docs/oa.md section 4.4, config oa_block: check): after
// every clock it compares every output, the counters, head, tail and status and the
// read of the clock's reg_addr; read() compares too.  The first difference prints both
// sides (reports decoded: reason, timestamp, context, ticks, A/B/C) and makes ok()
// false; the bool overloads return it.
//
// Waveforms: open_trace(path, from, to) writes an FST of the clocks whose GT cycle is in
// [from, to), at GT-cycle time like IrqBlock (one time unit per half cycle: a clock at
// cycle c is dumped at 2c before its edge and 2c+1 after it; several clocks in one
// cycle follow each other).
#ifndef ZESIM_MODEL_OA_RTL_H
#define ZESIM_MODEL_OA_RTL_H

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "oa_twin.h"
#include "rtl_harness.h"

class Vzs_oa;

namespace zesim {

// What the block shows besides its outputs (its observation ports and registers).
struct OaState {
    uint32_t ctl = 0, base_lo = 0, base_hi = 0, size_log2 = 0, head = 0, tail = 0, status = 0;
    uint32_t threshold = 0, reports = 0, lost = 0;
    uint32_t sel[ZS_OA_BC_COUNTERS] = {};
    uint64_t a[ZS_OA_A_COUNTERS] = {};
    uint32_t bc[ZS_OA_BC_COUNTERS] = {};
    uint32_t ticks = 0;

    static OaState of(const OaTwin &t);
};

class OaRtl {
public:
    OaRtl();
    ~OaRtl();
    OaRtl(const OaRtl &) = delete;
    OaRtl &operator=(const OaRtl &) = delete;

    // One clock.  `cycle` is the GT cycle of the boundary after it (waveform time only).
    OaOut step(const OaIn &in, uint64_t cycle = 0);
    // MMIO read (combinational): the state before the next clock.
    uint32_t read(uint32_t off) const;
    // The read of the last clock's reg_addr, sampled before its edge.
    uint32_t read_before() const { return rdata_before_; }
    void reset();

    // The observation ports: counters, head / tail / status; the trigger bits of the last
    // clock and the reason of the last buffer report.  state_full() also reads every
    // register through the MMIO port.
    void counters(uint64_t *a, uint32_t *bc, uint32_t *ticks) const;
    uint32_t head() const;
    uint32_t tail() const;
    uint32_t status() const;
    uint32_t trig() const;
    uint32_t last_reason() const;
    OaState state_full();

    void open_trace(const std::string &path, uint64_t from = 0, uint64_t to = UINT64_MAX);
    void close_trace();
    uint64_t clocks() const { return clocks_; }
    // The waveform time of the last clock's edge (its outputs from then on).
    uint64_t dump_time() const { return time_; }
    // Clocks written to the waveform, and the time of the first one.
    uint64_t dumped() const { return dumped_; }
    uint64_t first_dump_time() const { return first_dump_; }

private:
    RtlHarness harness_;
    std::unique_ptr<Vzs_oa> rtl_;
    uint64_t clocks_ = 0, time_ = 0, from_ = 0, to_ = UINT64_MAX, dumped_ = 0, first_dump_ = 0;
    uint32_t rdata_before_ = 0;
};

class OaChecked {
public:
    OaChecked();

    // The twin's interface: the RTL's outputs; a difference prints both sides and makes
    // ok() false (sticky).
    OaOut step(const OaIn &in, uint64_t cycle = 0);
    uint32_t read(uint32_t off);
    // The same, returning false on a difference.
    bool step(const OaIn &in, OaOut &out, uint64_t cycle = 0);
    bool read(uint32_t off, uint32_t &value);
    // Every register read on both sides and compared.
    bool compare_registers();
    bool ok() const { return ok_; }
    // Where the report of a difference goes (stderr by default).
    void set_log(std::FILE *f) { log_ = f; }

    OaRtl &rtl() { return rtl_; }
    const OaTwin &twin() const { return twin_; }
    void open_trace(const std::string &path, uint64_t from = 0, uint64_t to = UINT64_MAX)
    {
        rtl_.open_trace(path, from, to);
    }
    void close_trace() { rtl_.close_trace(); }

private:
    void mismatch(const char *what, const OaIn *in, const OaOut *rtl_out, const OaOut *twin_out);
    OaRtl rtl_;
    OaTwin twin_;
    bool ok_ = true;
    uint64_t clocks_ = 0, cycle_ = 0;
    std::FILE *log_ = stderr;
};

// A report decoded on one line (reason, context, timestamp, ticks) and its counters.
void oa_print_report(std::FILE *f, const char *who, const uint32_t *dw, bool query);
// Two reports side by side, every field that differs marked.
void oa_print_report_diff(std::FILE *f, const uint32_t *rtl, const uint32_t *twin);

}  // namespace zesim

#endif
