// zs_oa: the OA performance-counter block (docs/oa.md section 4).
//
// Counters A0-A29 (40 bits, wrapping) count the event lines of include/zs/oa_events.def;
// A30-A34 read 0 and A35 holds the last OA_MARKER value.  The 16 B/C counters (32 bits)
// each count the source their OA_BC_SEL register names: an event line, or the EU active /
// stall / idle cycles of the sub-slices in the register's mask.  A report writer turns
// the triggers (timer, marker, MMIO trigger, context switch) into one Gen12
// A32u40_A4u32_B8_C8 report (include/zs/oa_report.h) to the OA buffer at its tail, with
// head/tail, the lost/overflow status and the threshold interrupt; a query report
// (REPORT_PERF_COUNT, port rpc) goes to its own address.
//
// One clock is one step of the C++ twin (model/oa_twin.h, the golden model), in order:
// the MMIO write; the step's increments (totals over adv_cycles cycles, while enabled);
// the triggers at the boundary after the step; the reports.  reg_rdata is a
// combinational read of the state before the clock.  Every output is registered: it
// shows what the last clock produced (buf_wr / rpc_wr / irq are one-clock pulses, and
// buf_addr, buf_data, rpc_addr_o, rpc_data read 0 when their strobe is low).  A report
// is not a second copy of the counters: buf_data and rpc_data are wired to the counter
// flops, which after the clock hold exactly the values the report carries.
`define ZS_REGS_PKG_NO_LINT_TOP
`include "rtl/zs_regs_pkg.sv"

module zs_oa
  import zs_regs_pkg::*;
#(
    localparam int unsigned NLINES = OA_EVENT_LINES,
    localparam int unsigned NSS = OA_MAX_SUBSLICES,
    localparam int unsigned NBC = OA_BC_COUNTERS,
    localparam int unsigned NA = OA_A_COUNTERS,
    localparam int unsigned NDW = OA_REPORT_DWORDS,
    localparam int unsigned RATIOW = $clog2(OA_ID_CLOCK_RATIO_MASK + 1),
    localparam int unsigned REASONW = $clog2(OA_ID_REASON_MASK + 1)
) (
    input  logic                        clk,
    input  logic                        rst_n,
    // MMIO: a write port and a combinational read (full offsets; the block answers
    // 0x4000-0x4fff, other offsets read 0 and ignore writes).
    input  logic                        reg_we,
    input  logic [31:0]                 reg_addr,
    input  logic [31:0]                 reg_wdata,
    output logic [31:0]                 reg_rdata,
    // The event lines: totals over the clock's adv_cycles cycles.
    input  logic [31:0]                 adv_cycles,
    input  logic [NLINES-1:0][31:0]     inc,
    input  logic [NSS-1:0][2:0][31:0]   ss_inc,     // per sub-slice: EU active, stall, idle
    input  logic [63:0]                 timestamp,  // at the boundary after the clock
    input  logic                        rpc,        // query report (REPORT_PERF_COUNT)
    input  logic [63:0]                 rpc_addr,
    input  logic [31:0]                 rpc_id,
    input  logic [31:0]                 ctx_id,
    input  logic                        ctx_switch,
    input  logic [RATIOW-1:0]           clock_ratio,
    // Reports.
    output logic                        buf_wr,
    output logic [63:0]                 buf_addr,
    output logic [NDW-1:0][31:0]        buf_data,
    output logic                        rpc_wr,
    output logic [63:0]                 rpc_addr_o,
    output logic [NDW-1:0][31:0]        rpc_data,
    output logic                        irq,        // pulse: IRQ_STATUS.OA_BUFFER
    // Observation (waveforms and tests): the counters, the trigger bits of the last
    // clock (0 when none or disabled), the reason of the last buffer report written, and
    // the buffer's head, tail and status.
    output logic [NA-1:0][39:0]         a,
    output logic [NBC-1:0][31:0]        bc,
    output logic [31:0]                 ticks,
    output logic [REASONW-1:0]          trig,
    output logic [REASONW-1:0]          reason,
    output logic [31:0]                 head,
    output logic [31:0]                 tail,
    output logic [31:0]                 status
);

  // ---------------------------------------------------------------------------------
  // Register fields (rtl/zs_regs_pkg.sv).
  localparam int unsigned CTLW = OA_CTL_BUFFER_LSB + OA_CTL_BUFFER_WIDTH;  // OA_CTL bits kept
  localparam int unsigned EN = OA_CTL_ENABLE_LSB;
  localparam int unsigned TMR = OA_CTL_TIMER_LSB;
  localparam int unsigned EXPL = OA_CTL_EXPONENT_LSB;
  localparam int unsigned EXPW = OA_CTL_EXPONENT_WIDTH;
  localparam int unsigned CSW = OA_CTL_CTX_SWITCH_LSB;
  localparam int unsigned BUF = OA_CTL_BUFFER_LSB;
  localparam int unsigned STW = OA_STATUS_OVERFLOW_LSB + OA_STATUS_OVERFLOW_WIDTH;
  localparam int unsigned SZW = OA_BUF_SIZE_LOG2_WIDTH;
  localparam int unsigned EVW = OA_BC_SEL0_EVENT_WIDTH;
  localparam int unsigned RPT = OA_REPORT_BYTES;
  localparam int unsigned RPTL = $clog2(RPT);
  localparam int unsigned BASEL = 12;  // OA_BUF_BASE_LO bits 11:0 ignored (4 KiB aligned)
  localparam int unsigned NA40 = OA_A40_COUNTERS;

  // ---------------------------------------------------------------------------------
  // State.
  logic [CTLW-1:0] ctl_q;
  logic [31:0] base_lo_q, base_hi_q, head_q, tail_q, threshold_q, reports_q, lost_q, marker_q;
  logic [SZW-1:0] size_q;
  logic [STW-1:0] status_q;
  logic [31:0] ticks_q, ctx_q;
  logic [63:0] ts_q;  // the timestamp of the last clock (timer crossings, report DW1)
  logic buf_wr_q, rpc_wr_q, irq_q;
  logic [63:0] buf_addr_q, rpc_addr_q;
  logic [31:0] buf_id_q, rpc_id_q;
  logic [REASONW-1:0] trig_q, reason_q;
  logic [NLINES-1:0][39:0] a_q;  // A0-A29, one flop set per counter (g_a)
  logic [NBC-1:0][31:0] bc_q, sel_q;  // B0-B7, C0-C7 and their selects (g_bc)

  // ---------------------------------------------------------------------------------
  // 1. The MMIO write.
  logic [CTLW-1:0] ctl_d;
  logic [31:0] base_lo_d, base_hi_d, head_w, tail_w, threshold_d, marker_d;
  logic [SZW-1:0] size_d;
  logic [STW-1:0] status_w;
  logic clear;  // OA_CTL.ENABLE 0 to 1: counters and ticks start from 0
  logic trig_marker, trig_mmio;
  logic [31:0] size_mask_q;
  logic [NBC-1:0] sel_we;

  assign size_mask_q = (32'd1 << size_q) - 32'd1;

  always_comb begin
    ctl_d = ctl_q;
    base_lo_d = base_lo_q;
    base_hi_d = base_hi_q;
    size_d = size_q;
    head_w = head_q;
    tail_w = tail_q;
    status_w = status_q;
    threshold_d = threshold_q;
    marker_d = marker_q;
    clear = 1'b0;
    trig_marker = 1'b0;
    trig_mmio = 1'b0;
    if (reg_we) begin
      case (reg_addr)
        REG_OA_CTL: begin
          clear = !ctl_q[EN] && reg_wdata[EN];
          ctl_d = reg_wdata[CTLW-1:0];
        end
        REG_OA_BUF_BASE_LO: begin
          base_lo_d = reg_wdata;
          head_w = '0;
          tail_w = '0;
        end
        REG_OA_BUF_BASE_HI: base_hi_d = reg_wdata;
        REG_OA_BUF_SIZE: begin
          if (reg_wdata[SZW-1:0] < SZW'(OA_BUF_LOG2_MIN)) size_d = SZW'(OA_BUF_LOG2_MIN);
          else if (reg_wdata[SZW-1:0] > SZW'(OA_BUF_LOG2_MAX)) size_d = SZW'(OA_BUF_LOG2_MAX);
          else size_d = reg_wdata[SZW-1:0];
          head_w = '0;
          tail_w = '0;
        end
        REG_OA_HEAD: head_w = reg_wdata & size_mask_q & ~(RPT - 1);
        REG_OA_STATUS: status_w = status_q & ~reg_wdata[STW-1:0];
        REG_OA_THRESHOLD: threshold_d = reg_wdata;
        REG_OA_MARKER: begin
          marker_d = reg_wdata;
          trig_marker = 1'b1;
        end
        REG_OA_TRIGGER: trig_mmio = reg_wdata[0];
        default: ;
      endcase
    end
  end

  // ---------------------------------------------------------------------------------
  // 2. The increments, with the counters enabled after the write.
  logic en_d;
  assign en_d = ctl_d[EN];

  // A0-A29: one 40-bit counter per event line.
  for (genvar k = 0; k < NLINES; k++) begin : g_a
    logic [39:0] cnt;
    always_ff @(posedge clk or negedge rst_n) begin
      if (!rst_n) cnt <= '0;
      else if (en_d) cnt <= (clear ? 40'd0 : cnt) + {8'd0, inc[k]};
    end
    assign a_q[k] = cnt;
  end

  // B0-B7, C0-C7: the select register, its source mux and the counter.
  for (genvar i = 0; i < NBC; i++) begin : g_bc
    logic [31:0] sel, sel_d, src, cnt;
    logic [EVW-1:0] ev;
    logic [NSS-1:0] mask;
    assign sel_we[i] = reg_we && reg_addr == REG_OA_BC_SEL0 + 4 * i;
    assign sel_d = sel_we[i] ? reg_wdata : sel;
    assign ev = sel_d[OA_BC_SEL0_EVENT_LSB+:EVW];
    assign mask = sel_d[OA_BC_SEL0_SS_MASK_LSB+:NSS];
    always_comb begin
      src = '0;
      if (ev < EVW'(NLINES)) src = inc[ev[$clog2(NLINES)-1:0]];
      else if (ev >= EVW'(OA_BC_EU_ACTIVE) && ev <= EVW'(OA_BC_EU_IDLE))
        for (int s = 0; s < NSS; s++) if (mask[s]) src = src + ss_inc[s][2'(ev - EVW'(OA_BC_EU_ACTIVE))];
    end
    always_ff @(posedge clk or negedge rst_n) begin
      if (!rst_n) begin
        sel <= RESET_OA_BC_SEL0;
        cnt <= '0;
      end else begin
        sel <= sel_d;
        if (en_d) cnt <= (clear ? 32'd0 : cnt) + src;
      end
    end
    assign sel_q[i] = sel;
    assign bc_q[i] = cnt;
  end

  // ---------------------------------------------------------------------------------
  // 3. The triggers at the boundary after the clock.  The timer: the timestamp crossed a
  // multiple of 2^(EXPONENT+1) since the previous clock, with the timer running before
  // this clock's write (a clock that turns it on sees no crossing of the gap before it).
  logic [EXPW:0] exp_d;
  logic timer_was_on, trig_timer, trig_ctx;
  logic [REASONW-1:0] reason_d;
  assign exp_d = {1'b0, ctl_d[EXPL+:EXPW]} + 1'b1;
  assign timer_was_on = ctl_q[EN] && ctl_q[TMR];
  assign trig_timer = timer_was_on && ctl_d[TMR] && (timestamp >> exp_d) != (ts_q >> exp_d);
  assign trig_ctx = ctl_d[CSW] && ctx_switch;
  always_comb begin
    reason_d = '0;
    if (en_d) begin
      if (trig_timer) reason_d = reason_d | REASONW'(OA_REASON_TIMER);
      if (trig_marker) reason_d = reason_d | REASONW'(OA_REASON_MARKER);
      if (trig_mmio) reason_d = reason_d | REASONW'(OA_REASON_MMIO);
      if (trig_ctx) reason_d = reason_d | REASONW'(OA_REASON_CTX_SWITCH);
    end
  end

  // ---------------------------------------------------------------------------------
  // 4. The report writer: one slot stays free; a report that finds the buffer full is
  // lost; the write that fills the last slot sets OVERFLOW.
  logic [31:0] size_mask_d, full_bytes, unread, tail_n, unread_n, reports_d, lost_d, buf_id_d;
  logic [STW-1:0] status_d;
  logic report, full, write, irq_d;
  logic [63:0] buf_addr_d;
  assign size_mask_d = (32'd1 << size_d) - 32'd1;
  assign full_bytes = size_mask_d + 32'd1 - RPT;
  assign unread = (tail_w - head_w) & size_mask_d;
  assign full = unread == full_bytes;
  assign report = |reason_d && ctl_d[BUF];
  assign write = report && !full;
  assign tail_n = write ? (tail_w + RPT) & size_mask_d : tail_w;
  assign unread_n = (tail_n - head_w) & size_mask_d;
  assign reports_d = write ? reports_q + 32'd1 : reports_q;
  assign lost_d = report && full ? lost_q + 32'd1 : lost_q;
  assign irq_d = write && threshold_d != 0 && (unread_n >> RPTL) >= threshold_d;
  assign buf_addr_d = write ? {base_hi_d, base_lo_d[31:BASEL], BASEL'(0)} + {32'd0, tail_w} : '0;
  assign buf_id_d = 32'(reason_d) << OA_ID_REASON_SHIFT | (ctx_id != 0 ? OA_ID_CONTEXT_VALID : 0) |
      32'(clock_ratio);
  always_comb begin
    status_d = status_w;
    if (report && full) status_d[OA_STATUS_REPORT_LOST_LSB] = 1'b1;
    if (write && unread_n == full_bytes) status_d[OA_STATUS_OVERFLOW_LSB] = 1'b1;
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      ctl_q <= CTLW'(RESET_OA_CTL);
      base_lo_q <= RESET_OA_BUF_BASE_LO;
      base_hi_q <= RESET_OA_BUF_BASE_HI;
      size_q <= SZW'(RESET_OA_BUF_SIZE);
      head_q <= RESET_OA_HEAD;
      tail_q <= RESET_OA_TAIL;
      status_q <= STW'(RESET_OA_STATUS);
      threshold_q <= RESET_OA_THRESHOLD;
      reports_q <= RESET_OA_REPORTS;
      lost_q <= RESET_OA_LOST;
      marker_q <= '0;
      ticks_q <= '0;
      ts_q <= '0;
      ctx_q <= '0;
      buf_wr_q <= 1'b0;
      buf_addr_q <= '0;
      buf_id_q <= '0;
      rpc_wr_q <= 1'b0;
      rpc_addr_q <= '0;
      rpc_id_q <= '0;
      irq_q <= 1'b0;
      trig_q <= '0;
      reason_q <= '0;
    end else begin
      ctl_q <= ctl_d;
      base_lo_q <= base_lo_d;
      base_hi_q <= base_hi_d;
      size_q <= size_d;
      head_q <= head_w;
      tail_q <= tail_n;
      status_q <= status_d;
      threshold_q <= threshold_d;
      reports_q <= reports_d;
      lost_q <= lost_d;
      marker_q <= marker_d;
      if (en_d) ticks_q <= (clear ? 32'd0 : ticks_q) + adv_cycles;
      ts_q <= timestamp;
      ctx_q <= ctx_id;
      buf_wr_q <= write;
      buf_addr_q <= buf_addr_d;
      buf_id_q <= buf_id_d;
      rpc_wr_q <= rpc;
      rpc_addr_q <= rpc ? rpc_addr : '0;
      rpc_id_q <= rpc_id;
      irq_q <= irq_d;
      trig_q <= reason_d;
      if (write) reason_q <= reason_d;
    end
  end

  // ---------------------------------------------------------------------------------
  // The report: the layout of include/zs/oa_report.h over the counter flops.
  logic [NDW-1:0][31:0] report_body;  // DW1 onwards (DW0, the id, differs per report)
  always_comb begin
    report_body = '0;
    report_body[OA_DW_TIMESTAMP] = ts_q[31:0];
    report_body[OA_DW_CONTEXT] = ctx_q;
    report_body[OA_DW_TICKS] = ticks_q;
    for (int k = 0; k < NA; k++) report_body[OA_DW_A+k] = a[k][31:0];
    for (int k = 0; k < NA40; k++) report_body[(OA_BYTE_A_HIGH+k)/4][8*((OA_BYTE_A_HIGH+k)%4)+:8] = a[k][39:32];
    for (int i = 0; i < NBC; i++) report_body[OA_DW_B+i] = bc_q[i];
  end

  always_comb begin
    buf_data = '0;
    rpc_data = '0;
    if (buf_wr_q) begin
      buf_data = report_body;
      buf_data[OA_DW_REPORT_ID] = buf_id_q;
    end
    if (rpc_wr_q) begin
      rpc_data = report_body;
      rpc_data[OA_DW_REPORT_ID] = rpc_id_q;
    end
  end

  // ---------------------------------------------------------------------------------
  // The MMIO read: the state before the clock.
  always_comb begin
    reg_rdata = '0;
    case (reg_addr)
      REG_OA_CTL: reg_rdata = 32'(ctl_q);
      REG_OA_BUF_BASE_LO: reg_rdata = base_lo_q;
      REG_OA_BUF_BASE_HI: reg_rdata = base_hi_q;
      REG_OA_BUF_SIZE: reg_rdata = 32'(size_q);
      REG_OA_HEAD: reg_rdata = head_q;
      REG_OA_TAIL: reg_rdata = tail_q;
      REG_OA_STATUS: reg_rdata = 32'(status_q);
      REG_OA_THRESHOLD: reg_rdata = threshold_q;
      REG_OA_REPORTS: reg_rdata = reports_q;
      REG_OA_LOST: reg_rdata = lost_q;
      default: for (int i = 0; i < NBC; i++) if (reg_addr == REG_OA_BC_SEL0 + 4 * i) reg_rdata = sel_q[i];
    endcase
  end

  // ---------------------------------------------------------------------------------
  // Outputs.
  always_comb begin
    a = '0;
    for (int k = 0; k < NLINES; k++) a[k] = a_q[k];
    a[OA_MARKER_COUNTER] = {8'd0, marker_q};
  end
  assign bc = bc_q;
  assign ticks = ticks_q;
  assign trig = trig_q;
  assign reason = reason_q;
  assign head = head_q;
  assign tail = tail_q;
  assign status = 32'(status_q);
  assign buf_wr = buf_wr_q;
  assign buf_addr = buf_addr_q;
  assign rpc_wr = rpc_wr_q;
  assign rpc_addr_o = rpc_addr_q;
  assign irq = irq_q;

  // ---------------------------------------------------------------------------------
  // What the structure above assumes of the register map and the report layout.
  if (REG_OA_BC_SEL15 != REG_OA_BC_SEL0 + 4 * (NBC - 1)) begin : g_check_sel
    $error("zs_oa: OA_BC_SEL0-15 are not consecutive dwords");
  end
  if (OA_BC_SEL0_SS_MASK_WIDTH != NSS || OA_BC_EU_IDLE - OA_BC_EU_ACTIVE != 2)
  begin : g_check_bc
    $error("zs_oa: the B/C select codes or the sub-slice mask changed");
  end
  if (OA_MARKER_COUNTER != NA - 1 || NLINES > NA40 || OA_DW_B + NBC != NDW || OA_DW_C != OA_DW_B + OA_B_COUNTERS ||
      OA_BYTE_A_HIGH / 4 != OA_DW_A + NA || OA_BYTE_A_HIGH % 4 != 0 || NDW * 4 != RPT) begin : g_check_layout
    $error("zs_oa: the report layout of oa_report.h changed");
  end
  if (OA_BUF_LOG2_MIN < BASEL || OA_BUF_LOG2_MAX >= 32 || RESET_OA_BUF_SIZE != OA_BUF_LOG2_MIN) begin : g_check_size
    $error("zs_oa: OA_BUF_SIZE limits");
  end

endmodule
