/* The state save area (SSA) of the EU debug stack: its header and the layout of
 * one thread's slot (docs/debug.md section 2).  The header follows the reference
 * layout (uapi-facts section 5.6: "tssarea" + intelgt_state_save_area version 2),
 * so a tool written for that layout finds every register set; the values are this
 * ISA's.  The KMD writes the header once; the system routine (firmware/sip.zeasm)
 * and the hardware write the slots; debuggers read and write them through the
 * debug connection's VM fd. */
#ifndef ZESIM_UAPI_SSA_H
#define ZESIM_UAPI_SSA_H

#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct zesim_ssa_version {
	__u8 major;
	__u8 minor;
	__u16 patch;
};

/* At the start of the SSA. */
struct zesim_ssa_magic_header {
	char magic[8]; /* "tssarea" */
	__u64 reserved1;
	struct zesim_ssa_version version; /* 2.0.0 */
	__u8 size;			   /* the whole header (this + zesim_ssa_header) in 8-byte units */
	__u8 reserved2[3];
};

struct zesim_ssa_regset_desc {
	__u32 offset; /* in the slot; 0 with num 0: the set does not exist */
	__u16 num;    /* registers */
	__u16 bits;   /* bits per register */
	__u16 bytes;  /* bytes per register in the slot */
	__u16 pad;    /* (the reference struct is aligned to 8) */
};

/* Follows zesim_ssa_magic_header (reference: intelgt_state_save_area, v1/v2). */
struct zesim_ssa_header {
	__u32 num_slices, num_subslices_per_slice, num_eus_per_subslice, num_threads_per_eu;
	__u32 state_area_offset; /* first slot, from the start of the SSA */
	__u32 state_save_size;	 /* bytes per slot */
	__u32 slm_area_offset, slm_bank_size, slm_bank_valid; /* 0: SLM goes through the SIP's commands */
	__u32 sr_magic_offset;				      /* of struct zesim_ssa_sr_ident in the slot */
	struct zesim_ssa_regset_desc grf, addr, flag, emask, sr, cr, notification, tdr, acc, mme, ce, sp, cmd, tm, fc,
		dbg, ctx, dbg_reg;
};

/* In every slot at sr_magic_offset.  count: odd while the thread is in the SIP
 * (stopped), even while it runs; +1 at each entry and each exit. */
struct zesim_ssa_sr_ident {
	char magic[8]; /* "srmagic" */
	struct zesim_ssa_version version;
	__u8 count;
	__u8 reserved[7];
};

/* The slot's command area ("cmd" register set, 128 bytes): the debugger's
 * request to the SIP of a stopped thread. */
enum {
	ZESIM_SIP_CMD_RESUME = 0,
	ZESIM_SIP_CMD_READY = 1,     /* written by the SIP: the last request is done */
	ZESIM_SIP_CMD_SLM_READ = 2,  /* buffer <- SLM[offset, offset+size) */
	ZESIM_SIP_CMD_SLM_WRITE = 3, /* SLM[offset, offset+size) <- buffer */
};
#define ZESIM_SIP_CMD_BUFFER 112u
struct zesim_ssa_sip_command {
	__u32 command;
	__u32 size; /* bytes, a multiple of 4, <= ZESIM_SIP_CMD_BUFFER */
	__u64 offset; /* SLM byte offset, 4-aligned */
	__u8 buffer[ZESIM_SIP_CMD_BUFFER];
};

/* The slot layout (bytes from the slot's start).  Register sets after the Intel GPU
 * enum (zet_debug_regset_type_intel_gpu_t): GRF 1, ADDR 2, FLAG 3, CE 4, SR 5, CR 6,
 * TDR 7, ACC 8, SP 10, DBG 12. */
#define ZESIM_SSA_GRF_OFFSET 0u	      /* r0-r127, 32 bytes each */
#define ZESIM_SSA_ADDR_OFFSET 4096u   /* a0: 8 dwords */
#define ZESIM_SSA_FLAG_OFFSET 4128u   /* f0, f1: a dword each */
#define ZESIM_SSA_CE_OFFSET 4136u     /* ce: a dword (read only) */
#define ZESIM_SSA_SR_OFFSET 4144u     /* sr0: 4 dwords (read only) */
#define ZESIM_SSA_CR_OFFSET 4160u     /* cr0: 4 dwords; cr0.2 is where the thread resumes */
#define ZESIM_SSA_TDR_OFFSET 4176u    /* tdr: 8 dwords */
#define ZESIM_SSA_ACC_OFFSET 4208u    /* acc0, acc1: 8 dwords each */
#define ZESIM_SSA_SP_OFFSET 4272u     /* 4 dwords: control-flow stack depth, return stack depth, and of a
				       * page-fault stop the faulting address (lo, hi; else 0, 0) (read only) */
#define ZESIM_SSA_DBG_OFFSET 4288u    /* dbg0: 2 dwords */
#define ZESIM_SSA_TM_OFFSET 4296u     /* tm0: 2 dwords (read only) */
#define ZESIM_SSA_SR_IDENT_OFFSET 4304u /* struct zesim_ssa_sr_ident */
#define ZESIM_SSA_CMD_OFFSET 4320u    /* struct zesim_ssa_sip_command */
#define ZESIM_SSA_HW_OFFSET 4448u     /* hardware-private: control-flow and return stacks (docs/debug.md 2.3): */
#define ZESIM_SSA_HW_RET_IP_OFFSET (ZESIM_SSA_HW_OFFSET + 384u) /*  32 cf entries of 12 bytes, then 16 return ips */
#define ZESIM_SSA_HW_RET_IB_OFFSET (ZESIM_SSA_HW_OFFSET + 448u) /*  then their 16 instruction bases (8 bytes each) */
#define ZESIM_SSA_HW_BYTES 576u
#define ZESIM_SSA_SBA_OFFSET 5024u    /* "sba" set: the instruction base ip counts from (a qword, read only;
					 docs/isa.md 3.5); the absolute instruction address is sba + cr0.2 */
#define ZESIM_SSA_SLOT_SIZE 5120u     /* state_save_size */

#ifdef __cplusplus
}
#endif

#endif
