/* zesim-dbg: a command-line debugger for GPU kernels on the public Level Zero
 * program-debug API alone (zet_api.h: zetDebugAttach, ReadEvent, Acknowledge,
 * Interrupt, Resume, Read/WriteMemory, registers, Detach).  Line-oriented: a
 * "(zesim-dbg) " prompt, events printed as they come, readable under tmux.
 *
 *     zesim-dbg -p PID             attach to a running Level Zero program
 *     zesim-dbg -- PROGRAM ARGS    start PROGRAM (ZET_ENABLE_PROGRAM_DEBUGGING=1) and attach
 *
 * Breakpoints are set as real GPU debuggers do: bit 8 (BP) of the first dword of
 * the 16-byte instruction, written into the module's code with zetDebugWriteMemory
 * (docs/isa.md §2, §7).  A module's ELF comes with its MODULE_LOAD event; its
 * symbols give kernel offsets and its .debug_line gives source lines (zdbg_elf.c).
 * See tools/dbg/README.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdbg_cmd.h"
#include "zdbg_elf.h"

#define PROMPT "(zesim-dbg) "
#define INST_BYTES 16u
#define BP_BIT (1u << 8)
#define MAX_MODULES 64
#define MAX_BPS 64
#define MAX_LOCS 16
#define MAX_STOPPED 1024

#define USAGE                                                                                                          \
	"usage: zesim-dbg [-q] -p PID\n"                                                                               \
	"       zesim-dbg [-q] -- PROGRAM [ARGS...]\n"                                                                 \
	"       zesim-dbg --lines MODULE.elf | --symbols MODULE.elf | --resolve MODULE.elf LOC\n"

static const char *help_text =
	"zesim-dbg: a debugger for GPU kernels on the Level Zero program-debug API (zet).\n"
	"\n" USAGE "\n"
	"  -p PID           attach to the running Level Zero program PID (same simulator:\n"
	"                   run the debugger with `./zesim run` and the program's ZESIM_SOCKET)\n"
	"  -- PROGRAM ARGS  start PROGRAM with ZET_ENABLE_PROGRAM_DEBUGGING=1 and attach to it\n"
	"  -q               no banner\n"
	"  --lines FILE     print the DWARF line table of a module file (file line address)\n"
	"  --symbols FILE   print the function symbols of a module file (address size name)\n"
	"  --resolve FILE LOC  where \"break LOC\" would go in a module file (address, kernel+offset, line)\n"
	"\n"
	"Commands (one per line at the \"(zesim-dbg) \" prompt):\n"
	"  break LOC                 LOC = KERNEL[+OFFSET] | FILE:LINE | *GPU_ADDRESS; pending until\n"
	"                            a module with that kernel or line is loaded\n"
	"  delete N                  remove breakpoint N\n"
	"  info breakpoints          list breakpoints and where they are inserted\n"
	"  info threads              stopped threads: slice/subslice/eu/thread, IP, kernel+offset, file:line\n"
	"  info modules              loaded modules: load address, kernels\n"
	"  info registers [SET [N[-M]]]  registers of the current thread (SET: grf, addr, flag, ce, sr,\n"
	"                            cr, tdr, acc, sp, dbg; default: every set but grf)\n"
	"  thread N                  make stopped thread N (from info threads) the current one\n"
	"  set $REG[.E] = VALUE      write dword E of a register: $r12.3, $grf12.3, $cr0.2, $f1\n"
	"  x/NFU ADDRESS             read memory: N units, F = x|d|u, U = b|h|w|g (default x/1xw)\n"
	"  continue                  resume every stopped thread\n"
	"  interrupt                 stop every thread of the program\n"
	"  wait [SECONDS]            wait for the next stop, module load or detach (default 30 s)\n"
	"  detach                    remove breakpoints, resume, detach (the program goes on)\n"
	"  quit                      detach; a program started by zesim-dbg is terminated\n"
	"  help                      this text\n";

typedef struct module {
	int live;
	uint64_t load;
	zd_elf_t elf;
	uint64_t text_end; /* the highest function end: [load, load + text_end) is code */
} module_t;

typedef struct bp_loc {
	int module;
	uint64_t gpu;
} bp_loc_t;

typedef struct bp {
	int used;
	int id;
	zd_loc_t loc;
	char spec[300];
	bp_loc_t locs[MAX_LOCS];
	int nlocs;
} bp_t;

typedef struct stopped {
	ze_device_thread_t t;
} stopped_t;

static struct dbg {
	ze_device_handle_t dev;
	zet_debug_session_handle_t sess;
	int attached;
	pid_t pid;
	pid_t child; /* started by us, 0 otherwise */
	int child_done;
	module_t mods[MAX_MODULES];
	bp_t bps[MAX_BPS];
	int next_bp;
	stopped_t stopped[MAX_STOPPED];
	int nstopped;
	int cur; /* current thread: index into stopped, -1 none */
	zet_debug_regset_properties_t regsets[32];
	uint32_t nregsets;
	int events_seen; /* stop, module load or detach events since the last "wait" */
	int at_prompt;	 /* the prompt is the last thing printed: an event starts a new line */
} D = {.cur = -1, .next_bp = 1};

static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void prompt(void)
{
	out(PROMPT);
	D.at_prompt = 1;
}

static const char *ze_err(ze_result_t r)
{
	switch (r) {
	case ZE_RESULT_SUCCESS:
		return "success";
	case ZE_RESULT_NOT_READY:
		return "not ready";
	case ZE_RESULT_ERROR_DEVICE_LOST:
		return "device lost";
	case ZE_RESULT_ERROR_NOT_AVAILABLE:
		return "not available";
	case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
		return "insufficient permissions";
	case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
		return "unsupported feature";
	case ZE_RESULT_ERROR_INVALID_ARGUMENT:
		return "invalid argument";
	case ZE_RESULT_ERROR_UNINITIALIZED:
		return "uninitialized";
	case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
		return "invalid handle";
	case ZE_RESULT_ERROR_INVALID_ENUMERATION:
		return "invalid enumeration";
	default:
		return "error";
	}
}

static const ze_device_thread_t all_threads = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};

static void thread_str(char *buf, size_t n, ze_device_thread_t t)
{
	snprintf(buf, n, "%u/%u/%u/%u", t.slice, t.subslice, t.eu, t.thread);
}

/* ---- memory and registers ------------------------------------------------ */

static ze_result_t mem_read(ze_device_thread_t t, uint64_t addr, void *buf, size_t n)
{
	zet_debug_memory_space_desc_t d = {ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC, NULL,
					   ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT, addr};
	return zetDebugReadMemory(D.sess, t, &d, n, buf);
}

static ze_result_t mem_write(ze_device_thread_t t, uint64_t addr, const void *buf, size_t n)
{
	zet_debug_memory_space_desc_t d = {ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC, NULL,
					   ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT, addr};
	return zetDebugWriteMemory(D.sess, t, &d, n, buf);
}

static const zet_debug_regset_properties_t *regset(uint32_t type)
{
	for (uint32_t i = 0; i < D.nregsets; i++)
		if (D.regsets[i].type == type)
			return &D.regsets[i];
	return NULL;
}

/* Dword elem of register reg of set type in thread t. */
static ze_result_t reg_dword(ze_device_thread_t t, uint32_t type, uint32_t reg, uint32_t elem, uint32_t *v)
{
	const zet_debug_regset_properties_t *rs = regset(type);
	if (!rs || reg >= rs->count || (elem + 1) * 4 > rs->byteSize)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	uint8_t buf[512];
	if (rs->byteSize > sizeof(buf))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	ze_result_t r = zetDebugReadRegisters(D.sess, t, type, reg, 1, buf);
	if (r == ZE_RESULT_SUCCESS)
		memcpy(v, buf + elem * 4, 4);
	return r;
}

/* ---- modules and source positions -------------------------------------------- */

/* A GPU address in a module's code: the module and the address in its ELF. */
static int module_of(uint64_t gpu, uint64_t *elf_addr)
{
	for (int m = 0; m < MAX_MODULES; m++) {
		if (D.mods[m].live && gpu >= D.mods[m].load && gpu - D.mods[m].load < D.mods[m].text_end) {
			*elf_addr = gpu - D.mods[m].load;
			return m;
		}
	}
	return -1;
}

/* "kernel+0x40 at file.cl:12" for an address of an ELF (m: its module, -1 none). */
static void describe_elf(char *buf, size_t n, const zd_elf_t *e, int m, uint64_t a)
{
	const zd_sym_t *s = zd_sym_at(e, a);
	const zd_row_t *row = zd_row_at(e, a);
	size_t k = 0;
	if (s)
		k = (size_t)snprintf(buf, n, "%s+0x%llx", s->name, (unsigned long long)(a - s->addr));
	else if (m >= 0)
		k = (size_t)snprintf(buf, n, "module %d+0x%llx", m, (unsigned long long)a);
	else
		k = (size_t)snprintf(buf, n, "0x%llx (no function)", (unsigned long long)a);
	if (row && row->file < e->nfiles && k < n) {
		const char *f = e->files[row->file], *b = strrchr(f, '/');
		snprintf(buf + k, n - k, " at %s:%u", b ? b + 1 : f, row->line);
	}
}

static void describe(char *buf, size_t n, int m, uint64_t a)
{
	describe_elf(buf, n, &D.mods[m].elf, m, a);
}

/* A kernel's code with the functions after it (its text section): up to the
 * end of the last symbol before the next kernel. */
static uint64_t kernel_extent(const zd_elf_t *e, const zd_sym_t *k)
{
	uint64_t next = UINT64_MAX, end = k->addr + k->size;
	for (size_t i = 0; i < e->nsyms; i++)
		if (e->syms[i].global && e->syms[i].addr > k->addr && e->syms[i].addr < next)
			next = e->syms[i].addr;
	for (size_t i = 0; i < e->nsyms; i++) {
		const zd_sym_t *s = &e->syms[i];
		if (s->addr >= k->addr && s->addr < next && s->addr + s->size > end)
			end = s->addr + s->size;
	}
	return end - k->addr;
}

/* The thread's IP as places in modules.  cr0.2 holds the IP the thread resumes at, an
 * offset from the thread's instruction base (docs/isa.md §1, §3.5: the kernel's entry,
 * or the target of a calla into another module's code), which the SBA register set
 * holds: sba + ip is the absolute address, in exactly one module's code.  A driver
 * without the SBA set leaves the old guess: an IP inside a module's code as a GPU
 * address maps there; a breakpoint stop at a kernel offset where one of our
 * breakpoints is inserted is that kernel; else every kernel long enough to hold the IP
 * is a candidate (one: that kernel).  Writes up to max (module, ELF address) pairs,
 * returns how many. */
static int place_of_ip(uint32_t ip, int bp_stop, int *mods, uint64_t *addrs, int max)
{
	uint64_t a;
	int m = module_of(ip, &a);
	if (m >= 0) {
		mods[0] = m;
		addrs[0] = a;
		return 1;
	}
	for (int b = 0; bp_stop && b < MAX_BPS; b++) {
		if (!D.bps[b].used)
			continue;
		for (int l = 0; l < D.bps[b].nlocs; l++) {
			const bp_loc_t *L = &D.bps[b].locs[l];
			a = L->gpu - D.mods[L->module].load;
			const zd_sym_t *s = zd_sym_at(&D.mods[L->module].elf, a);
			if (s && s->global && a - s->addr == ip) {
				mods[0] = L->module;
				addrs[0] = a;
				return 1;
			}
		}
	}
	int n = 0;
	for (int i = 0; i < MAX_MODULES; i++) {
		if (!D.mods[i].live)
			continue;
		const zd_elf_t *e = &D.mods[i].elf;
		for (size_t k = 0; k < e->nsyms; k++) {
			if (!e->syms[k].global || ip >= kernel_extent(e, &e->syms[k]))
				continue;
			if (n < max) {
				mods[n] = i;
				addrs[n] = e->syms[k].addr + ip;
			}
			n++;
		}
	}
	return n < max ? n : max;
}

static const char *stop_reason(uint32_t status)
{
	if (status & 1u)
		return "breakpoint";
	if (status & 4u)
		return "page fault";
	if (status & (1u << 30))
		return "interrupted";
	if (status & (1u << 6))
		return "halt";
	if (status & (1u << 26))
		return "forced exception";
	if (status & 2u)
		return "illegal instruction";
	return status ? "exception" : "stopped";
}

/* "ip 0x40 vadd+0x40 at vadd.cl:6" for a stopped thread. */
static void thread_where(ze_device_thread_t t, char *buf, size_t n, uint32_t *status_out)
{
	uint32_t ip = 0, status = 0;
	ze_result_t r1 = reg_dword(t, ZD_REGSET_CR, 0, 2, &ip), r2 = reg_dword(t, ZD_REGSET_CR, 0, 1, &status);
	if (status_out)
		*status_out = r2 == ZE_RESULT_SUCCESS ? status : 0;
	if (r1 != ZE_RESULT_SUCCESS) {
		snprintf(buf, n, "ip unknown (cr0 not readable: %s)", ze_err(r1));
		return;
	}
	int mods[4];
	uint64_t addrs[4];
	uint32_t sba[2];
	int k;
	if (reg_dword(t, ZD_REGSET_SBA, 0, 0, &sba[0]) == ZE_RESULT_SUCCESS &&
	    reg_dword(t, ZD_REGSET_SBA, 0, 1, &sba[1]) == ZE_RESULT_SUCCESS) {
		const uint64_t gpu = ((uint64_t)sba[1] << 32 | sba[0]) + ip;
		k = (mods[0] = module_of(gpu, &addrs[0])) >= 0;
		if (!k) {
			snprintf(buf, n, "ip 0x%x at 0x%llx (in no loaded module)", ip, (unsigned long long)gpu);
			return;
		}
	} else {
		k = place_of_ip(ip, (status & 1u) != 0, mods, addrs, 4);
	}
	size_t len = (size_t)snprintf(buf, n, "ip 0x%x%s", ip, k > 1 ? " (one of: " : k ? " " : "");
	for (int i = 0; i < k && len < n; i++) {
		char where[400];
		describe(where, sizeof(where), mods[i], addrs[i]);
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", where);
	}
	if (k > 1 && len < n)
		snprintf(buf + len, n - len, ")");
}

/* ---- breakpoints ------------------------------------------------------------- */

static int bp_write(uint64_t gpu, int set, uint32_t *old_out)
{
	uint32_t dw;
	ze_result_t r = mem_read(all_threads, gpu, &dw, 4);
	if (r != ZE_RESULT_SUCCESS) {
		out("cannot read the instruction at 0x%llx: %s\n", (unsigned long long)gpu, ze_err(r));
		return -1;
	}
	if (old_out)
		*old_out = dw;
	dw = set ? dw | BP_BIT : dw & ~BP_BIT;
	r = mem_write(all_threads, gpu, &dw, 4);
	if (r != ZE_RESULT_SUCCESS) {
		out("cannot write the instruction at 0x%llx: %s\n", (unsigned long long)gpu, ze_err(r));
		return -1;
	}
	return 0;
}

static int bp_has(const bp_t *b, uint64_t gpu)
{
	for (int l = 0; l < b->nlocs; l++)
		if (b->locs[l].gpu == gpu)
			return 1;
	return 0;
}

/* Is another breakpoint than skip inserted at gpu? (Then its bit stays.) */
static int bp_other_at(const bp_t *skip, uint64_t gpu)
{
	for (int b = 0; b < MAX_BPS; b++)
		if (D.bps[b].used && &D.bps[b] != skip && bp_has(&D.bps[b], gpu))
			return 1;
	return 0;
}

/* The ELF addresses of a KERNEL[+OFFSET] or FILE:LINE location (at most MAX_LOCS). */
static size_t loc_addrs(const zd_loc_t *loc, const zd_elf_t *e, uint64_t *addrs, char *err, size_t errlen)
{
	if (loc->kind == ZD_LOC_KERNEL) {
		const zd_sym_t *s = zd_sym_by_name(e, loc->name);
		if (!s)
			return 0;
		if (loc->value >= s->size) {
			snprintf(err, errlen, "offset 0x%llx is past the end of %s (0x%llx bytes)",
				 (unsigned long long)loc->value, s->name, (unsigned long long)s->size);
			return 0;
		}
		addrs[0] = s->addr + loc->value;
		return 1;
	}
	uint32_t used = 0;
	size_t n = zd_addrs_for_line(e, loc->name, (uint32_t)loc->value, addrs, MAX_LOCS, &used);
	return n > MAX_LOCS ? MAX_LOCS : n;
}

/* Resolve breakpoint b in module m and insert what is new.  Returns the number
 * of locations added. */
static int bp_resolve(bp_t *b, int m)
{
	const module_t *mod = &D.mods[m];
	uint64_t addrs[MAX_LOCS];
	size_t n = 0;
	if (b->loc.kind != ZD_LOC_ADDR) {
		char err[300] = "";
		n = loc_addrs(&b->loc, &mod->elf, addrs, err, sizeof(err));
		if (err[0])
			out("breakpoint %d: %s\n", b->id, err);
	}
	else {
		uint64_t a = 0;
		if (module_of(b->loc.value, &a) != m)
			return 0;
		addrs[n++] = a;
	}
	int added = 0;
	for (size_t i = 0; i < n && b->nlocs < MAX_LOCS; i++) {
		uint64_t gpu = mod->load + addrs[i];
		if (bp_has(b, gpu))
			continue;
		if (bp_write(gpu, 1, NULL))
			continue;
		b->locs[b->nlocs++] = (bp_loc_t){m, gpu};
		char where[400];
		describe(where, sizeof(where), m, addrs[i]);
		out("breakpoint %d at 0x%llx: %s\n", b->id, (unsigned long long)gpu, where);
		added++;
	}
	return added;
}

static void bp_remove_locs(bp_t *b)
{
	for (int l = 0; l < b->nlocs; l++)
		if (D.mods[b->locs[l].module].live && !bp_other_at(b, b->locs[l].gpu))
			bp_write(b->locs[l].gpu, 0, NULL);
	b->nlocs = 0;
}

static void cmd_break(const char *spec)
{
	zd_loc_t loc;
	char err[300];
	if (zd_parse_loc(spec, &loc, err, sizeof(err))) {
		out("%s\n", err);
		return;
	}
	int slot = -1;
	for (int i = 0; i < MAX_BPS; i++)
		if (!D.bps[i].used) {
			slot = i;
			break;
		}
	if (slot < 0) {
		out("too many breakpoints (%d); delete one first\n", MAX_BPS);
		return;
	}
	bp_t *b = &D.bps[slot];
	memset(b, 0, sizeof(*b));
	b->used = 1;
	b->id = D.next_bp++;
	b->loc = loc;
	snprintf(b->spec, sizeof(b->spec), "%s", spec);
	int added = 0, mods = 0;
	for (int m = 0; m < MAX_MODULES; m++)
		if (D.mods[m].live) {
			mods++;
			added += bp_resolve(b, m);
		}
	if (!added) {
		if (loc.kind == ZD_LOC_ADDR && mods)
			out("breakpoint %d: 0x%llx is in no loaded module's code; pending\n", b->id,
			    (unsigned long long)loc.value);
		else
			out("breakpoint %d (%s) pending: no loaded module has %s\n", b->id, spec,
			    loc.kind == ZD_LOC_LINE ? "code at or after that line" : "that kernel");
	}
}

static void cmd_delete(const char *arg)
{
	uint64_t id;
	if (!arg || zd_parse_u64(arg, &id)) {
		out("usage: delete N (info breakpoints lists them)\n");
		return;
	}
	for (int i = 0; i < MAX_BPS; i++) {
		if (D.bps[i].used && (uint64_t)D.bps[i].id == id) {
			bp_remove_locs(&D.bps[i]);
			D.bps[i].used = 0;
			out("deleted breakpoint %d\n", (int)id);
			return;
		}
	}
	out("no breakpoint %llu\n", (unsigned long long)id);
}

static void info_breakpoints(void)
{
	int any = 0;
	for (int i = 0; i < MAX_BPS; i++) {
		const bp_t *b = &D.bps[i];
		if (!b->used)
			continue;
		any = 1;
		out("%-3d %s%s\n", b->id, b->spec, b->nlocs ? "" : "  (pending)");
		for (int l = 0; l < b->nlocs; l++) {
			char where[400];
			describe(where, sizeof(where), b->locs[l].module, b->locs[l].gpu - D.mods[b->locs[l].module].load);
			out("      0x%llx  %s\n", (unsigned long long)b->locs[l].gpu, where);
		}
	}
	if (!any)
		out("no breakpoints\n");
}

/* ---- events -------------------------------------------------------------------- */

static void forget_stopped(void)
{
	D.nstopped = 0;
	D.cur = -1;
}

static int same_thread(ze_device_thread_t a, ze_device_thread_t b)
{
	return a.slice == b.slice && a.subslice == b.subslice && a.eu == b.eu && a.thread == b.thread;
}

static void on_module_load(const zet_debug_event_t *ev)
{
	const zet_debug_event_info_module_t *mi = &ev->info.module;
	int m = -1;
	for (int i = 0; i < MAX_MODULES; i++)
		if (!D.mods[i].live) {
			m = i;
			break;
		}
	char err[300] = "";
	if (m < 0)
		out("[module at 0x%llx ignored: more than %d modules]\n", (unsigned long long)mi->load, MAX_MODULES);
	else if (mi->moduleEnd <= mi->moduleBegin || mi->moduleEnd - mi->moduleBegin > (256u << 20))
		out("[module at 0x%llx: its ELF range 0x%llx-0x%llx is empty or too large]\n",
		    (unsigned long long)mi->load, (unsigned long long)mi->moduleBegin, (unsigned long long)mi->moduleEnd);
	else if (zd_elf_parse((const void *)(uintptr_t)mi->moduleBegin, (size_t)(mi->moduleEnd - mi->moduleBegin),
			      &D.mods[m].elf, err, sizeof(err)))
		out("[module at 0x%llx: unreadable ELF: %s]\n", (unsigned long long)mi->load, err);
	else {
		module_t *mod = &D.mods[m];
		mod->live = 1;
		mod->load = mi->load;
		mod->text_end = 0;
		int nk = 0;
		char names[512] = "";
		size_t k = 0;
		for (size_t i = 0; i < mod->elf.nsyms; i++) {
			const zd_sym_t *s = &mod->elf.syms[i];
			if (s->addr + s->size > mod->text_end)
				mod->text_end = s->addr + s->size;
			if (s->global && k < sizeof(names)) {
				k += (size_t)snprintf(names + k, sizeof(names) - k, "%s%s", nk ? ", " : "", s->name);
				nk++;
			}
		}
		out("[module %d loaded at 0x%llx: %d kernel%s (%s), %s]\n", m, (unsigned long long)mod->load, nk,
		    nk == 1 ? "" : "s", names, mod->elf.nrows ? "with source lines" : "no line table");
		for (int b = 0; b < MAX_BPS; b++)
			if (D.bps[b].used)
				bp_resolve(&D.bps[b], m);
	}
	if (ev->flags & ZET_DEBUG_EVENT_FLAG_NEED_ACK) {
		ze_result_t r = zetDebugAcknowledgeEvent(D.sess, ev);
		if (r != ZE_RESULT_SUCCESS)
			out("[cannot acknowledge the module event: %s]\n", ze_err(r));
	}
}

static void on_module_unload(const zet_debug_event_t *ev)
{
	for (int m = 0; m < MAX_MODULES; m++) {
		if (!D.mods[m].live || D.mods[m].load != ev->info.module.load)
			continue;
		for (int b = 0; b < MAX_BPS; b++) {
			bp_t *bp = &D.bps[b];
			int w = 0;
			for (int l = 0; l < bp->nlocs; l++)
				if (bp->locs[l].module != m)
					bp->locs[w++] = bp->locs[l];
			bp->nlocs = w;
		}
		zd_elf_free(&D.mods[m].elf);
		D.mods[m].live = 0;
		out("[module %d unloaded]\n", m);
	}
	if (ev->flags & ZET_DEBUG_EVENT_FLAG_NEED_ACK)
		zetDebugAcknowledgeEvent(D.sess, ev);
}

static void on_thread_stopped(ze_device_thread_t t)
{
	char ts[64], where[600];
	thread_str(ts, sizeof(ts), t);
	int idx = -1;
	for (int i = 0; i < D.nstopped; i++)
		if (same_thread(D.stopped[i].t, t))
			idx = i;
	if (idx < 0 && D.nstopped < MAX_STOPPED) {
		idx = D.nstopped++;
		D.stopped[idx].t = t;
	}
	if (D.cur < 0)
		D.cur = idx;
	uint32_t status = 0;
	thread_where(t, where, sizeof(where), &status);
	out("[thread %d (%s) stopped: %s, %s]\n", idx, ts, stop_reason(status), where);
}

/* Read and handle every pending event; returns how many. */
static int poll_events(uint64_t timeout_ms)
{
	int n = 0;
	while (D.attached) {
		zet_debug_event_t ev;
		memset(&ev, 0, sizeof(ev));
		ze_result_t r = zetDebugReadEvent(D.sess, n ? 0 : timeout_ms, &ev);
		if (r == ZE_RESULT_NOT_READY)
			break;
		if (r != ZE_RESULT_SUCCESS) {
			out("[reading debug events failed: %s; detaching]\n", ze_err(r));
			zetDebugDetach(D.sess);
			D.attached = 0;
			D.events_seen++;
			break;
		}
		n++;
		if (D.at_prompt) {
			out("\n");
			D.at_prompt = 0;
		}
		char ts[64];
		switch (ev.type) {
		case ZET_DEBUG_EVENT_TYPE_DETACHED:
			out("[detached: %s]\n", ev.info.detached.reason == ZET_DEBUG_DETACH_REASON_HOST_EXIT
							? "the program exited"
							: "by the driver");
			zetDebugDetach(D.sess);
			D.attached = 0;
			forget_stopped();
			D.events_seen++;
			break;
		case ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY:
			out("[process entry]\n");
			break;
		case ZET_DEBUG_EVENT_TYPE_PROCESS_EXIT:
			out("[process exit]\n");
			break;
		case ZET_DEBUG_EVENT_TYPE_MODULE_LOAD:
			on_module_load(&ev);
			D.events_seen++;
			break;
		case ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD:
			on_module_unload(&ev);
			break;
		case ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED:
			on_thread_stopped(ev.info.thread.thread);
			D.events_seen++;
			break;
		case ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE:
			thread_str(ts, sizeof(ts), ev.info.thread.thread);
			out("[thread %s unavailable (it ended before it could stop)]\n", ts);
			break;
		case ZET_DEBUG_EVENT_TYPE_PAGE_FAULT:
			out("[page fault at 0x%llx (mask 0x%llx, %s)]\n", (unsigned long long)ev.info.page_fault.address,
			    (unsigned long long)ev.info.page_fault.mask,
			    ev.info.page_fault.reason == ZET_DEBUG_PAGE_FAULT_REASON_MAPPING_ERROR ? "not mapped"
			    : ev.info.page_fault.reason == ZET_DEBUG_PAGE_FAULT_REASON_PERMISSION_ERROR
				    ? "permission"
				    : "reason unknown");
			break;
		default:
			out("[debug event of type %u]\n", (unsigned)ev.type);
			break;
		}
		if (ev.flags & ZET_DEBUG_EVENT_FLAG_NEED_ACK && ev.type != ZET_DEBUG_EVENT_TYPE_MODULE_LOAD &&
		    ev.type != ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD)
			zetDebugAcknowledgeEvent(D.sess, &ev);
	}
	return n;
}

/* ---- commands ----------------------------------------------------------------- */

static int need_session(void)
{
	if (!D.attached)
		out("not attached\n");
	return D.attached;
}

static int need_thread(void)
{
	if (!need_session())
		return 0;
	if (D.cur < 0 || D.cur >= D.nstopped) {
		out("no thread is stopped (break, then continue; or interrupt)\n");
		return 0;
	}
	return 1;
}

static void info_threads(void)
{
	if (!D.nstopped) {
		out("no stopped threads\n");
		return;
	}
	out("  #  slice/subslice/eu/thread  where\n");
	for (int i = 0; i < D.nstopped; i++) {
		char ts[64], where[600];
		thread_str(ts, sizeof(ts), D.stopped[i].t);
		thread_where(D.stopped[i].t, where, sizeof(where), NULL);
		out("%c %-2d %-24s  %s\n", i == D.cur ? '*' : ' ', i, ts, where);
	}
}

static void info_modules(void)
{
	int any = 0;
	for (int m = 0; m < MAX_MODULES; m++) {
		const module_t *mod = &D.mods[m];
		if (!mod->live)
			continue;
		any = 1;
		out("module %d at 0x%llx, %llu bytes of code%s\n", m, (unsigned long long)mod->load,
		    (unsigned long long)mod->text_end, mod->elf.nrows ? ", with source lines" : "");
		for (size_t i = 0; i < mod->elf.nsyms; i++)
			out("  0x%llx %s %s (%llu bytes)\n", (unsigned long long)(mod->load + mod->elf.syms[i].addr),
			    mod->elf.syms[i].global ? "kernel  " : "function", mod->elf.syms[i].name,
			    (unsigned long long)mod->elf.syms[i].size);
	}
	if (!any)
		out("no modules loaded\n");
}

static void print_regs(ze_device_thread_t t, const zet_debug_regset_properties_t *rs, uint32_t first, uint32_t last)
{
	const char *name = zd_regset_name(rs->type), *prefix = zd_regset_prefix(rs->type);
	if (!(rs->generalFlags & ZET_DEBUG_REGSET_FLAG_READABLE)) {
		out("%s: not readable\n", name ? name : "?");
		return;
	}
	if (rs->byteSize == 0 || rs->byteSize > 512 || rs->byteSize % 4) {
		out("%s: %u-byte registers (not shown)\n", name ? name : "?", rs->byteSize);
		return;
	}
	uint8_t buf[512];
	for (uint32_t i = first; i <= last && i < rs->count; i++) {
		ze_result_t r = zetDebugReadRegisters(D.sess, t, rs->type, i, 1, buf);
		if (r != ZE_RESULT_SUCCESS) {
			out("%s%u: cannot read: %s\n", prefix ? prefix : "reg", i, ze_err(r));
			return;
		}
		char line[1200];
		snprintf(line, sizeof(line), "%s%u", prefix ? prefix : "reg", i);
		size_t k = strlen(line);
		while (k < 6)
			line[k++] = ' ';
		for (uint32_t d = 0; d < rs->byteSize / 4 && k + 12 < sizeof(line); d++) {
			uint32_t v;
			memcpy(&v, buf + 4 * d, 4);
			k += (size_t)snprintf(line + k, sizeof(line) - k, " 0x%08x", v);
		}
		line[k] = 0;
		out("%s\n", line);
	}
}

static void info_registers(char **w, int n)
{
	if (!need_thread())
		return;
	ze_device_thread_t t = D.stopped[D.cur].t;
	if (n == 0) {
		for (uint32_t i = 0; i < D.nregsets; i++)
			if (D.regsets[i].type != ZD_REGSET_GRF && zd_regset_name(D.regsets[i].type))
				print_regs(t, &D.regsets[i], 0, D.regsets[i].count - 1);
		return;
	}
	uint32_t type = zd_regset_by_name(w[0]);
	const zet_debug_regset_properties_t *rs = type ? regset(type) : NULL;
	if (!rs) {
		out("no register set \"%s\"; the device has:", w[0]);
		for (uint32_t i = 0; i < D.nregsets; i++)
			if (zd_regset_name(D.regsets[i].type))
				out(" %s", zd_regset_name(D.regsets[i].type));
		out("\n");
		return;
	}
	uint32_t first = 0, last = rs->count - 1;
	if (n > 1) {
		char *dash = strchr(w[1], '-');
		uint64_t a, b;
		if (dash)
			*dash = 0;
		if (zd_parse_u64(w[1], &a) || (dash && zd_parse_u64(dash + 1, &b)) || a >= rs->count ||
		    (dash && (b < a || b >= rs->count))) {
			out("registers: N or N-M with 0 <= N <= M < %u\n", rs->count);
			return;
		}
		first = (uint32_t)a;
		last = dash ? (uint32_t)b : first;
	}
	print_regs(t, rs, first, last);
}

static void cmd_set(char **w, int n)
{
	zd_regref_t ref;
	uint64_t v;
	if (n != 3 || strcmp(w[1], "=") || zd_parse_regref(w[0], &ref) || zd_parse_u64(w[2], &v) || v > UINT32_MAX) {
		out("usage: set $REG[.E] = VALUE   e.g. set $r12.3 = 0x10 (a 32-bit value)\n");
		return;
	}
	if (!need_thread())
		return;
	const zet_debug_regset_properties_t *rs = regset(ref.type);
	if (!rs || ref.reg >= rs->count || (ref.elem + 1) * 4 > rs->byteSize || rs->byteSize > 512) {
		out("no register %s (the set has %u registers of %u dwords)\n", w[0], rs ? rs->count : 0,
		    rs ? rs->byteSize / 4 : 0);
		return;
	}
	if (!(rs->generalFlags & ZET_DEBUG_REGSET_FLAG_WRITEABLE)) {
		out("%s: the %s set is read only\n", w[0], zd_regset_name(ref.type));
		return;
	}
	ze_device_thread_t t = D.stopped[D.cur].t;
	uint8_t buf[512];
	ze_result_t r = zetDebugReadRegisters(D.sess, t, ref.type, ref.reg, 1, buf);
	if (r == ZE_RESULT_SUCCESS) {
		uint32_t v32 = (uint32_t)v;
		memcpy(buf + 4 * ref.elem, &v32, 4);
		r = zetDebugWriteRegisters(D.sess, t, ref.type, ref.reg, 1, buf);
	}
	if (r != ZE_RESULT_SUCCESS)
		out("cannot write %s: %s\n", w[0], ze_err(r));
	else
		out("%s = 0x%x\n", w[0], (unsigned)v);
}

static void cmd_x(const char *fmtpart, char **w, int n)
{
	zd_xfmt_t f;
	char err[200];
	uint64_t addr;
	if (zd_parse_xfmt(fmtpart, &f, err, sizeof(err))) {
		out("%s\n", err);
		return;
	}
	if (n != 1 || zd_parse_u64(w[0], &addr)) {
		out("usage: x/NFU ADDRESS   e.g. x/8x 0xff000000\n");
		return;
	}
	if (!need_session())
		return;
	size_t bytes = (size_t)f.count * f.size;
	uint8_t *buf = malloc(bytes);
	if (!buf)
		return;
	ze_device_thread_t t = D.cur >= 0 ? D.stopped[D.cur].t : all_threads;
	ze_result_t r = mem_read(t, addr, buf, bytes);
	if (r != ZE_RESULT_SUCCESS) {
		out("cannot read %zu bytes at 0x%llx: %s\n", bytes, (unsigned long long)addr, ze_err(r));
		free(buf);
		return;
	}
	unsigned per_line = 16 / f.size;
	for (uint32_t i = 0; i < f.count; i++) {
		if (i % per_line == 0)
			out("%s0x%llx:", i ? "\n" : "", (unsigned long long)(addr + (uint64_t)i * f.size));
		uint64_t v = 0;
		memcpy(&v, buf + (size_t)i * f.size, f.size);
		if (f.fmt == 'x')
			out(" 0x%0*llx", (int)f.size * 2, (unsigned long long)v);
		else if (f.fmt == 'u')
			out(" %llu", (unsigned long long)v);
		else {
			int64_t s = f.size == 8 ? (int64_t)v
						: (int64_t)(v << (64 - 8 * f.size)) >> (64 - 8 * f.size);
			out(" %lld", (long long)s);
		}
	}
	out("\n");
	free(buf);
}

static void cmd_continue(void)
{
	if (!need_session())
		return;
	if (!D.nstopped) {
		out("no thread is stopped; the program is running\n");
		return;
	}
	ze_result_t r = zetDebugResume(D.sess, all_threads);
	if (r != ZE_RESULT_SUCCESS) {
		out("resume failed: %s\n", ze_err(r));
		return;
	}
	out("continuing %d thread%s\n", D.nstopped, D.nstopped == 1 ? "" : "s");
	forget_stopped();
}

static void cmd_thread(const char *arg)
{
	uint64_t i;
	if (!arg || zd_parse_u64(arg, &i) || i >= (uint64_t)D.nstopped) {
		out("usage: thread N, N < %d (info threads lists them)\n", D.nstopped);
		return;
	}
	D.cur = (int)i;
	char ts[64], where[600];
	thread_str(ts, sizeof(ts), D.stopped[i].t);
	thread_where(D.stopped[i].t, where, sizeof(where), NULL);
	out("thread %d (%s): %s\n", (int)i, ts, where);
}

static void cmd_wait(const char *arg)
{
	uint64_t secs = 30;
	if (arg && zd_parse_u64(arg, &secs)) {
		out("usage: wait [SECONDS]\n");
		return;
	}
	if (!need_session())
		return;
	D.events_seen = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (D.attached && !D.events_seen) {
		poll_events(100);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((uint64_t)(t.tv_sec - t0.tv_sec) >= secs) {
			out("nothing happened in %llu s\n", (unsigned long long)secs);
			return;
		}
	}
}

static void do_detach(void)
{
	if (!D.attached)
		return;
	for (int b = 0; b < MAX_BPS; b++)
		if (D.bps[b].used)
			bp_remove_locs(&D.bps[b]);
	if (D.nstopped)
		zetDebugResume(D.sess, all_threads);
	forget_stopped();
	ze_result_t r = zetDebugDetach(D.sess);
	D.attached = 0;
	out("detached from %d%s%s\n", (int)D.pid, r ? ": " : "", r ? ze_err(r) : "");
}

static void reap_child(int block)
{
	if (!D.child || D.child_done)
		return;
	int st;
	pid_t p = waitpid(D.child, &st, block ? 0 : WNOHANG);
	if (p != D.child)
		return;
	D.child_done = 1;
	if (WIFEXITED(st))
		out("[program %d exited with code %d]\n", (int)D.child, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		out("[program %d killed by signal %d]\n", (int)D.child, WTERMSIG(st));
}

/* Is word an abbreviation of full, at least min letters long? */
static int abbrev(const char *word, const char *full, size_t min)
{
	size_t n = strlen(word);
	return n >= min && n <= strlen(full) && !strncmp(word, full, n);
}

/* One command line; returns 1 to quit. */
static int command(char *line)
{
	char *w[16];
	int n = zd_split(line, w, 16);
	if (!n)
		return 0;
	const char *c = w[0];
	if (!strcmp(c, "help") || !strcmp(c, "h"))
		out("%s", help_text);
	else if (!strcmp(c, "break") || !strcmp(c, "b")) {
		if (n != 2)
			out("usage: break KERNEL[+OFFSET] | FILE:LINE | *ADDRESS\n");
		else if (need_session())
			cmd_break(w[1]);
	}
	else if (!strcmp(c, "delete") || !strcmp(c, "d"))
		cmd_delete(n > 1 ? w[1] : NULL);
	else if (!strcmp(c, "info") || !strcmp(c, "i")) {
		const char *what = n > 1 ? w[1] : "";
		if (abbrev(what, "threads", 2))
			info_threads();
		else if (abbrev(what, "breakpoints", 1))
			info_breakpoints();
		else if (abbrev(what, "registers", 1))
			info_registers(w + 2, n - 2);
		else if (abbrev(what, "modules", 1))
			info_modules();
		else
			out("info threads | breakpoints | registers [SET [N[-M]]] | modules\n");
	}
	else if (!strcmp(c, "continue") || !strcmp(c, "c"))
		cmd_continue();
	else if (!strcmp(c, "interrupt")) {
		if (need_session()) {
			ze_result_t r = zetDebugInterrupt(D.sess, all_threads);
			if (r == ZE_RESULT_SUCCESS)
				out("interrupting every thread\n");
			else if (r == ZE_RESULT_NOT_READY)
				out("an interrupt is already pending\n");
			else if (r == ZE_RESULT_ERROR_NOT_AVAILABLE)
				out("no thread is running (nothing to interrupt)\n");
			else
				out("interrupt failed: %s\n", ze_err(r));
		}
	}
	else if (!strcmp(c, "thread") || !strcmp(c, "t"))
		cmd_thread(n > 1 ? w[1] : NULL);
	else if (!strcmp(c, "set"))
		cmd_set(w + 1, n - 1);
	else if (c[0] == 'x' && (c[1] == 0 || c[1] == '/'))
		cmd_x(c + 1, w + 1, n - 1);
	else if (!strcmp(c, "wait"))
		cmd_wait(n > 1 ? w[1] : NULL);
	else if (!strcmp(c, "detach")) {
		do_detach();
		if (D.child) {
			out("waiting for program %d to end\n", (int)D.child);
			reap_child(1);
		}
		return 1;
	}
	else if (!strcmp(c, "quit") || !strcmp(c, "q")) {
		do_detach();
		if (D.child && !D.child_done) {
			kill(D.child, SIGTERM);
			reap_child(1);
		}
		return 1;
	}
	else
		out("unknown command \"%s\" (help lists the commands)\n", c);
	return 0;
}

/* ---- set-up ---------------------------------------------------------------------- */

static int load_file(const char *path, zd_elf_t *e)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "zesim-dbg: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	size_t k;
	while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap && cap < (256u << 20)) {
			uint8_t *b2 = realloc(buf, cap * 2);
			if (!b2) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b2;
			cap *= 2;
		}
		else if (n == cap)
			break;
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "zesim-dbg: out of memory\n");
		return -1;
	}
	char err[300];
	int rc = zd_elf_parse(buf, n, e, err, sizeof(err));
	free(buf);
	if (rc)
		fprintf(stderr, "zesim-dbg: %s: %s\n", path, err);
	return rc;
}

/* --resolve: where breakpoint LOC goes in a module file. */
static int resolve_file(const char *path, const char *spec)
{
	zd_loc_t loc;
	char err[300] = "";
	if (zd_parse_loc(spec, &loc, err, sizeof(err)) || loc.kind == ZD_LOC_ADDR) {
		fprintf(stderr, "zesim-dbg: %s\n", err[0] ? err : "--resolve takes KERNEL[+OFFSET] or FILE:LINE");
		return 2;
	}
	zd_elf_t e;
	if (load_file(path, &e))
		return 1;
	uint64_t addrs[MAX_LOCS];
	size_t n = loc_addrs(&loc, &e, addrs, err, sizeof(err));
	for (size_t i = 0; i < n; i++) {
		char where[400];
		describe_elf(where, sizeof(where), &e, -1, addrs[i]);
		printf("0x%llx %s\n", (unsigned long long)addrs[i], where);
	}
	if (!n)
		fprintf(stderr, "zesim-dbg: %s: %s\n", spec, err[0] ? err : "no such kernel, or no code at or after that line");
	zd_elf_free(&e);
	return n ? 0 : 1;
}

/* --lines: "file line address" per row (end_sequence rows: "- - address"). */
static int dump_file(const char *path, int lines)
{
	zd_elf_t e;
	if (load_file(path, &e))
		return 1;
	if (lines) {
		for (size_t i = 0; i < e.nrows; i++) {
			const zd_row_t *r = &e.rows[i];
			if (r->end_seq)
				printf("- - 0x%llx\n", (unsigned long long)r->addr);
			else
				printf("%s %u 0x%llx%s\n", r->file < e.nfiles ? e.files[r->file] : "?", r->line,
				       (unsigned long long)r->addr, r->is_stmt ? "" : " !stmt");
		}
	}
	else {
		for (size_t i = 0; i < e.nsyms; i++)
			printf("0x%llx %llu %s%s\n", (unsigned long long)e.syms[i].addr,
			       (unsigned long long)e.syms[i].size, e.syms[i].name, e.syms[i].global ? "" : " (local)");
	}
	zd_elf_free(&e);
	return 0;
}

static int find_device(void)
{
	setenv("ZET_ENABLE_PROGRAM_DEBUGGING", "1", 0);
	ze_result_t r = zeInit(0);
	if (r != ZE_RESULT_SUCCESS) {
		fprintf(stderr, "zesim-dbg: zeInit failed (%s, 0x%x): no Level Zero driver; run it as "
				"`./zesim run -- zesim-dbg ...`\n",
			ze_err(r), r);
		return -1;
	}
	uint32_t nd = 1;
	ze_driver_handle_t drv;
	if (zeDriverGet(&nd, &drv) != ZE_RESULT_SUCCESS || !nd) {
		fprintf(stderr, "zesim-dbg: no Level Zero driver\n");
		return -1;
	}
	uint32_t ndev = 1;
	if (zeDeviceGet(drv, &ndev, &D.dev) != ZE_RESULT_SUCCESS || !ndev) {
		fprintf(stderr, "zesim-dbg: no Level Zero device\n");
		return -1;
	}
	zet_device_debug_properties_t props = {ZET_STRUCTURE_TYPE_DEVICE_DEBUG_PROPERTIES, NULL, 0};
	r = zetDeviceGetDebugProperties(D.dev, &props);
	if (r != ZE_RESULT_SUCCESS || !(props.flags & ZET_DEVICE_DEBUG_PROPERTY_FLAG_ATTACH)) {
		fprintf(stderr, "zesim-dbg: the device does not support attaching a debugger (%s)\n",
			r != ZE_RESULT_SUCCESS ? ze_err(r) : "no ATTACH flag");
		return -1;
	}
	D.nregsets = 0;
	r = zetDebugGetRegisterSetProperties(D.dev, &D.nregsets, NULL);
	if (r == ZE_RESULT_SUCCESS) {
		if (D.nregsets > 32)
			D.nregsets = 32;
		for (uint32_t i = 0; i < D.nregsets; i++)
			D.regsets[i] = (zet_debug_regset_properties_t){.stype = ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES};
		r = zetDebugGetRegisterSetProperties(D.dev, &D.nregsets, D.regsets);
	}
	if (r != ZE_RESULT_SUCCESS) {
		fprintf(stderr, "zesim-dbg: cannot read the register sets (%s)\n", ze_err(r));
		return -1;
	}
	return 0;
}

/* 0 attached; 1 to retry (the program is not a Level Zero client yet); -1 refused. */
static int try_attach(pid_t pid, int quiet_retry)
{
	if (kill(pid, 0) && errno == ESRCH) {
		fprintf(stderr, "zesim-dbg: no process with pid %d\n", (int)pid);
		return -1;
	}
	zet_debug_config_t cfg = {(uint32_t)pid};
	ze_result_t r = zetDebugAttach(D.dev, &cfg, &D.sess);
	switch (r) {
	case ZE_RESULT_SUCCESS:
		D.attached = 1;
		D.pid = pid;
		return 0;
	case ZE_RESULT_ERROR_NOT_AVAILABLE:
		fprintf(stderr, "zesim-dbg: attach to %d refused: a debugger is already attached\n", (int)pid);
		return -1;
	case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
		fprintf(stderr, "zesim-dbg: attach to %d refused: not allowed to debug it (another user's process?)\n",
			(int)pid);
		return -1;
	default:
		if (quiet_retry)
			return 1;
		fprintf(stderr,
			"zesim-dbg: attach to %d refused (%s, 0x%x): is it a Level Zero program on this simulator "
			"(the same ZESIM_SOCKET) with ZET_ENABLE_PROGRAM_DEBUGGING=1?\n",
			(int)pid, ze_err(r), r);
		return -1;
	}
}

static int launch(char **argv)
{
	setenv("ZET_ENABLE_PROGRAM_DEBUGGING", "1", 1);
	pid_t p = fork();
	if (p < 0) {
		perror("zesim-dbg: fork");
		return -1;
	}
	if (p == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "zesim-dbg: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	D.child = p;
	/* The program attaches to the device when it starts; until then attach is refused. */
	for (int i = 0; i < 600; i++) {
		int rc = try_attach(p, 1);
		if (rc == 0)
			return 0;
		if (rc < 0)
			return -1;
		reap_child(0);
		if (D.child_done) {
			fprintf(stderr, "zesim-dbg: %s ended before zesim-dbg could attach\n", argv[0]);
			return -1;
		}
		usleep(50000);
	}
	fprintf(stderr, "zesim-dbg: %s did not become a Level Zero program in 30 s\n", argv[0]);
	return -1;
}

int main(int argc, char **argv)
{
	pid_t pid = 0;
	int quiet = 0, i;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(help_text, stdout);
			return 0;
		}
		if ((!strcmp(argv[i], "--lines") || !strcmp(argv[i], "--symbols")) && i + 1 < argc && argc == 3)
			return dump_file(argv[i + 1], !strcmp(argv[i], "--lines"));
		if (!strcmp(argv[i], "--resolve") && argc == 4 && i == 1)
			return resolve_file(argv[2], argv[3]);
		if (!strcmp(argv[i], "-q"))
			quiet = 1;
		else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			uint64_t v;
			if (zd_parse_u64(argv[++i], &v) || !v || v > 0x7fffffff) {
				fprintf(stderr, "zesim-dbg: -p needs a process id, not \"%s\"\n", argv[i]);
				return 2;
			}
			pid = (pid_t)v;
		}
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		else {
			fprintf(stderr, "zesim-dbg: unknown option \"%s\"\n%s", argv[i], USAGE);
			return 2;
		}
	}
	int launching = i < argc;
	if (!!pid == launching) {
		fprintf(stderr, "zesim-dbg: give either -p PID or -- PROGRAM\n%s", USAGE);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pid && kill(pid, 0) && errno == ESRCH) {
		fprintf(stderr, "zesim-dbg: no process with pid %d\n", (int)pid);
		return 1;
	}
	if (find_device())
		return 1;
	if (launching ? launch(argv + i) : try_attach(pid, 0)) {
		if (D.child && !D.child_done) {
			kill(D.child, SIGTERM);
			reap_child(1);
		}
		return 1;
	}
	if (!quiet)
		out("attached to %d (%u register sets); type help for the commands\n", (int)D.pid, D.nregsets);
	signal(SIGPIPE, SIG_IGN);
	char line[4096];
	size_t have = 0;
	int done = 0, eof = 0;
	prompt();
	while (!done) {
		struct pollfd pfd = {0, POLLIN, 0};
		int pr = eof ? 0 : poll(&pfd, 1, D.attached ? 20 : 200);
		if (D.attached && poll_events(0))
			prompt();
		reap_child(0);
		if (pr > 0) {
			ssize_t k = read(0, line + have, sizeof(line) - 1 - have);
			if (k <= 0) {
				eof = 1;
				out("\n");
				command((char[]){"quit"});
				break;
			}
			have += (size_t)k;
			D.at_prompt = 0;
			char *nl;
			while (!done && (nl = memchr(line, '\n', have))) {
				*nl = 0;
				size_t used = (size_t)(nl - line) + 1;
				done = command(line);
				memmove(line, line + used, have - used);
				have -= used;
				if (!done)
					prompt();
			}
			if (have == sizeof(line) - 1) {
				out("line too long (ignored)\n");
				prompt();
				have = 0;
			}
		}
	}
	return 0;
}
