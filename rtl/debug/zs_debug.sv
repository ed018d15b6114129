// zs_debug: the EU debug unit (docs/debug.md section 1; registers DBG_* of docs/mmio.md).
//
// Per hardware thread (NTHR = DBG_INFO, 1024): an attention bit (the thread is stopped
// for the debugger), a force-external-halt request, a force-exception request and the
// reason of its last stop.  The model reports, one clock per event like the OA block:
//   stop  (stop_valid, stop_tid, stop_reason 1 breakpoint / 2 page fault / 3 halt /
//          4 exception): the thread stopped and waits; it enters attention;
//   end   (end_valid, end_tid): the thread ended; all its state clears.
// The rules of one clock (the C++ twin model/debug_twin.h has the same ones):
//   - a stop is accepted unless its thread ends in the same clock, its reason is not
//     1-4, or the thread is already in attention and not resumed in that clock (an
//     attention already pending is not a second stop: no second interrupt, no count);
//   - attention' = ((attention & ~resume) | accepted) & ~ended: an accepted stop wins
//     over a resume of the same clock, an end wins over everything;
//   - requests' = (requests as written this clock) & ~attention' & ~ended: a request
//     ends when its thread stops or ends; a thread in attention never holds one;
//   - an accepted stop counts in DBG_STOPPED and, with DBG_CTL.IRQ_EN (the value before
//     the clock), pulses irq (IRQ_STATUS.DEBUG of zs_irq) for one clock.
// The reason memory is written only by accepted stops and read masked by attention, so
// resume and end need not clear it.  reg_rdata is a combinational read of the state
// before the clock; every other output is a register or a function of registers only.
`define ZS_REGS_PKG_NO_LINT_TOP
`include "rtl/zs_regs_pkg.sv"

module zs_debug
  import zs_regs_pkg::*;
#(
    localparam int unsigned NTHR = RESET_DBG_INFO,
    localparam int unsigned TW   = DBG_THREAD_INDEX_WIDTH,
    localparam int unsigned WW   = DBG_WORD_INDEX_WIDTH,
    localparam int unsigned RW   = DBG_REASON_REASON_WIDTH
) (
    input  logic            clk,
    input  logic            rst_n,
    // MMIO (one access per clock)
    input  logic            reg_we,
    input  logic [    31:0] reg_addr,
    input  logic [    31:0] reg_wdata,
    output logic [    31:0] reg_rdata,
    // events from the model
    input  logic            stop_valid,
    input  logic [  TW-1:0] stop_tid,
    input  logic [  RW-1:0] stop_reason,
    input  logic            end_valid,
    input  logic [  TW-1:0] end_tid,
    // to the model and the interrupt controller
    output logic [NTHR-1:0] attn,
    output logic [NTHR-1:0] halt_req,
    output logic [NTHR-1:0] exc_req,
    output logic            irq,         // pulse: IRQ_STATUS.DEBUG
    output logic [    31:0] stopped,     // DBG_STOPPED
    output logic [    31:0] attn_count   // DBG_ATTN_COUNT
);

  if (NTHR != (32 << WW) || NTHR != (1 << TW)) begin : g_check
    $error("zs_debug: DBG_INFO, DBG_WORD and DBG_THREAD disagree on the thread count");
  end

  logic [NTHR-1:0] attn_q, halt_q, exc_q;
  logic [NTHR-1:0] attn_d, halt_d, exc_d;
  logic [RW-1:0]   reason_q [NTHR];
  logic            ctl_q;
  logic [WW-1:0]   word_q;
  logic [TW-1:0]   thr_q;
  logic [31:0]     stopped_q;
  logic            irq_q;

  // ---- MMIO writes --------------------------------------------------------------------
  logic wr_ctl, wr_word, wr_halt, wr_exc, wr_resume, wr_all, wr_thr;
  assign wr_ctl    = reg_we && reg_addr == REG_DBG_CTL;
  assign wr_word   = reg_we && reg_addr == REG_DBG_WORD;
  assign wr_halt   = reg_we && reg_addr == REG_DBG_HALT;
  assign wr_exc    = reg_we && reg_addr == REG_DBG_EXC;
  assign wr_resume = reg_we && reg_addr == REG_DBG_RESUME;
  assign wr_all    = reg_we && reg_addr == REG_DBG_ALL;
  assign wr_thr    = reg_we && reg_addr == REG_DBG_THREAD;

  // The window: the written word at the DBG_WORD position, and the position's mask.
  logic [NTHR-1:0] wbits, wmask;
  assign wbits = NTHR'(reg_wdata) << (32 * word_q);
  assign wmask = NTHR'(32'hffff_ffff) << (32 * word_q);

  logic all_halt, all_cancel_halt, all_resume, all_cancel_exc;
  assign all_halt        = wr_all && reg_wdata[DBG_ALL_HALT_LSB];
  assign all_cancel_halt = wr_all && reg_wdata[DBG_ALL_CANCEL_HALT_LSB];
  assign all_resume      = wr_all && reg_wdata[DBG_ALL_RESUME_LSB];
  assign all_cancel_exc  = wr_all && reg_wdata[DBG_ALL_CANCEL_EXC_LSB];

  // ---- the next state -------------------------------------------------------------------
  logic [NTHR-1:0] resume_m, end_m, acc_m, halt_w, exc_w;
  logic            acc, reason_ok;

  assign resume_m  = (wr_resume ? wbits : '0) | (all_resume ? '1 : '0);
  assign end_m     = end_valid ? (NTHR'(1) << end_tid) : '0;
  assign reason_ok = stop_reason != '0 && stop_reason <= RW'(4);
  assign acc = stop_valid && reason_ok && !(end_valid && end_tid == stop_tid)
               && (!attn_q[stop_tid] || resume_m[stop_tid]);
  assign acc_m = acc ? (NTHR'(1) << stop_tid) : '0;

  assign attn_d = ((attn_q & ~resume_m) | acc_m) & ~end_m;

  // Requests: the window write replaces its 32 bits; DBG_ALL sets, then cancels.
  always_comb begin
    halt_w = wr_halt ? ((halt_q & ~wmask) | wbits) : halt_q;
    if (all_halt) halt_w = '1;
    if (all_cancel_halt) halt_w = '0;
    exc_w = wr_exc ? ((exc_q & ~wmask) | wbits) : exc_q;
    if (all_cancel_exc) exc_w = '0;
  end
  assign halt_d = halt_w & ~attn_d & ~end_m;
  assign exc_d  = exc_w & ~attn_d & ~end_m;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      attn_q    <= '0;
      halt_q    <= '0;
      exc_q     <= '0;
      ctl_q     <= 1'b0;
      word_q    <= '0;
      thr_q     <= '0;
      stopped_q <= '0;
      irq_q     <= 1'b0;
    end else begin
      attn_q <= attn_d;
      halt_q <= halt_d;
      exc_q  <= exc_d;
      if (wr_ctl) ctl_q <= reg_wdata[DBG_CTL_IRQ_EN_LSB];
      if (wr_word) word_q <= reg_wdata[WW-1:0];
      if (wr_thr) thr_q <= reg_wdata[TW-1:0];
      if (acc) stopped_q <= stopped_q + 32'd1;
      irq_q <= acc && ctl_q;
    end
  end

  // The reason memory (no reset: read only under attention).
  always_ff @(posedge clk) begin
    if (acc) reason_q[stop_tid] <= stop_reason;
  end

  // ---- outputs --------------------------------------------------------------------------
  assign attn       = attn_q;
  assign halt_req   = halt_q;
  assign exc_req    = exc_q;
  assign irq        = irq_q;
  assign stopped    = stopped_q;
  assign attn_count = 32'($countones(attn_q));

  // ---- MMIO read: the state before the clock ----------------------------------------------
  logic [RW-1:0] thr_reason;
  assign thr_reason = attn_q[thr_q] ? reason_q[thr_q] : '0;

  always_comb begin
    reg_rdata = '0;
    if (reg_addr == REG_DBG_CTL) reg_rdata = {31'd0, ctl_q};
    else if (reg_addr == REG_DBG_INFO) reg_rdata = NTHR;
    else if (reg_addr == REG_DBG_ATTN_COUNT) reg_rdata = attn_count;
    else if (reg_addr == REG_DBG_STOPPED) reg_rdata = stopped_q;
    else if (reg_addr == REG_DBG_WORD) reg_rdata = 32'(word_q);
    else if (reg_addr == REG_DBG_ATTN) reg_rdata = attn_q[32*word_q+:32];
    else if (reg_addr == REG_DBG_HALT) reg_rdata = halt_q[32*word_q+:32];
    else if (reg_addr == REG_DBG_EXC) reg_rdata = exc_q[32*word_q+:32];
    else if (reg_addr == REG_DBG_THREAD) reg_rdata = 32'(thr_q);
    else if (reg_addr == REG_DBG_REASON) begin
      reg_rdata[DBG_REASON_REASON_LSB+:RW]  = thr_reason;
      reg_rdata[DBG_REASON_ATTN_LSB]        = attn_q[thr_q];
      reg_rdata[DBG_REASON_HALT_REQ_LSB]    = halt_q[thr_q];
      reg_rdata[DBG_REASON_EXC_REQ_LSB]     = exc_q[thr_q];
    end
  end

endmodule
