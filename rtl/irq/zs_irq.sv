// zs_irq: the interrupt controller (docs/mmio.md "Interrupt controller").
//
// Eight sources (IRQ_STATUS fields of rtl/zs_regs_pkg.sv): ring user interrupt, engine
// error, EU fault, engine idle, and inputs reserved for the OA buffer and the debug
// unit.  A source pulse sets its status bit; an MMIO write to IRQ_STATUS clears the
// bits written as 1 (write-1-to-clear), except that a source firing in the same cycle
// wins: its bit stays set.  IRQ_ENABLE is a plain register.  The interrupt line to the
// KMD is a level: high while any enabled bit is pending.
//
// The C++ twin (model/irq_twin.h) implements the same rules; tests run both and compare
// every cycle's outputs.
`define ZS_REGS_PKG_NO_LINT_TOP
`include "rtl/zs_regs_pkg.sv"

module zs_irq
  import zs_regs_pkg::*;
#(
    parameter int unsigned NSRC = 8
) (
    input  logic            clk,
    input  logic            rst_n,
    input  logic [NSRC-1:0] src,         // source pulses this cycle
    input  logic            status_we,   // MMIO write to IRQ_STATUS (write 1 to clear)
    input  logic            enable_we,   // MMIO write to IRQ_ENABLE
    input  logic [    31:0] wdata,       // the MMIO write's data
    output logic [    31:0] status,      // IRQ_STATUS as read
    output logic [    31:0] enable,      // IRQ_ENABLE as read
    output logic            irq,         // level interrupt to the KMD
    output logic [    31:0] raised       // source pulses counted (for waveforms and tests)
);

  logic [NSRC-1:0] status_q, enable_q;
  logic [NSRC-1:0] clear;

  assign clear = status_we ? wdata[NSRC-1:0] : '0;

  // Bits above the implemented sources are ignored on writes (they read 0).
  logic unused_wdata;
  assign unused_wdata = ^wdata[31:NSRC];

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      status_q <= '0;
      enable_q <= '0;
      raised   <= '0;
    end else begin
      status_q <= (status_q & ~clear) | src;
      if (enable_we) enable_q <= wdata[NSRC-1:0];
      if (|src) raised <= raised + 32'd1;
    end
  end

  assign status = {{(32 - NSRC) {1'b0}}, status_q};
  assign enable = {{(32 - NSRC) {1'b0}}, enable_q};
  assign irq    = |(status_q & enable_q);

  // The sources are the IRQ_STATUS fields of the register map.
  localparam int unsigned NFIELDS = IRQ_STATUS_RESERVED_LSB + IRQ_STATUS_RESERVED_WIDTH;
  if (NFIELDS != NSRC) begin : g_check
    $error("zs_irq: NSRC must cover the IRQ_STATUS fields");
  end

endmodule
