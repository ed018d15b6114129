/* The debugger of the program-debug tests (debug_e2e.py): a plain Level Zero tool
 * program on the zet debug API, as a real debugger uses it.
 *
 *     test_debug_tool MODE PID [--dump FILE] [--modify]
 *
 * MODE: errors | disabled | bp | kill-target | kill-tool | interrupt | unavailable | fault | slm | bp-callee |
 * bp-running.  It prints
 * "attached" once attached (the harness then lets the target run), one line per event
 * and what it checked; it exits 0 when everything held, else 1 with the reason.  With
 * --dump, every stopped thread's register sets and the memory it read are written to
 * FILE as JSON lines (one per stop), for the comparison with the model's ledger. */
#include <elf.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <level_zero/zet_api.h>

#include "e2e.h"
#include "zs/zex_debug_notifier.h"

#define BP_OFFSET 160u /* dbgk: the add of out = in * 3 + 7 */
#define FAULT_OFFSET 48u /* fault: the load from the unmapped address */
#define EVENT_MS 20000u

static zet_debug_session_handle_t session;
static ze_device_handle_t device;
static int notifier = -1;
static FILE *dump;
static zex_pfnDebugGetEventNotifierExp_t get_notifier; /* --notifier */

static const char *type_name(zet_debug_event_type_t t)
{
	static const char *n[] = {"INVALID", "DETACHED", "PROCESS_ENTRY", "PROCESS_EXIT", "MODULE_LOAD",
				  "MODULE_UNLOAD", "THREAD_STOPPED", "THREAD_UNAVAILABLE", "PAGE_FAULT"};
	return (unsigned)t < 9 ? n[t] : "?";
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The next event, within ms; the notifier must agree with zetDebugReadEvent: readable
 * exactly when an event is there. */
static ze_result_t next_event(zet_debug_event_t *ev, uint64_t ms)
{
	if (notifier >= 0) {
		struct pollfd p = {.fd = notifier, .events = POLLIN};
		const int k = poll(&p, 1, (int)ms);
		if (k <= 0)
			return ZE_RESULT_NOT_READY;
		const ze_result_t r = zetDebugReadEvent(session, 0, ev);
		EXPECT(r == ZE_RESULT_SUCCESS, "the notifier was readable but zetDebugReadEvent(0) returned 0x%x",
		       (unsigned)r);
	} else {
		const ze_result_t r = zetDebugReadEvent(session, ms, ev);
		if (r == ZE_RESULT_NOT_READY)
			return r;
		CHECK(r);
	}
	printf("event %s", type_name(ev->type));
	if (ev->type == ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED || ev->type == ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE)
		printf(" %u.%u.%u.%u", ev->info.thread.thread.slice, ev->info.thread.thread.subslice,
		       ev->info.thread.thread.eu, ev->info.thread.thread.thread);
	if (ev->type == ZET_DEBUG_EVENT_TYPE_MODULE_LOAD || ev->type == ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD)
		printf(" load=0x%llx size=%llu%s", (unsigned long long)ev->info.module.load,
		       (unsigned long long)(ev->info.module.moduleEnd - ev->info.module.moduleBegin),
		       ev->flags & ZET_DEBUG_EVENT_FLAG_NEED_ACK ? " need-ack" : "");
	if (ev->type == ZET_DEBUG_EVENT_TYPE_PAGE_FAULT)
		printf(" address=0x%llx mask=0x%llx reason=%u", (unsigned long long)ev->info.page_fault.address,
		       (unsigned long long)ev->info.page_fault.mask, (unsigned)ev->info.page_fault.reason);
	if (ev->type == ZET_DEBUG_EVENT_TYPE_DETACHED)
		printf(" reason=%u", (unsigned)ev->info.detached.reason);
	printf("\n");
	fflush(stdout);
	return ZE_RESULT_SUCCESS;
}

static void wait_event(zet_debug_event_t *ev, zet_debug_event_type_t want)
{
	for (;;) {
		EXPECT(next_event(ev, EVENT_MS) == ZE_RESULT_SUCCESS, "no %s event within %u ms", type_name(want),
		       EVENT_MS);
		if (ev->type == want)
			return;
		EXPECT(ev->type != ZET_DEBUG_EVENT_TYPE_DETACHED, "detached while waiting for %s", type_name(want));
	}
}

/* The section `name`'s sh_addr in the module's ELF (the debugger's copy). */
static uint64_t section_addr(const zet_debug_event_t *ev, const char *name)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)ev->info.module.moduleBegin;
	const uint64_t size = ev->info.module.moduleEnd - ev->info.module.moduleBegin;
	EXPECT(size >= sizeof(Elf64_Ehdr) && memcmp(b, ELFMAG, SELFMAG) == 0, "the module is no ELF (%llu bytes)",
	       (unsigned long long)size);
	const Elf64_Ehdr *eh = (const void *)b;
	EXPECT(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size, "bad section table");
	const Elf64_Shdr *sh = (const void *)(b + eh->e_shoff);
	const char *strtab = (const char *)b + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (strcmp(strtab + sh[i].sh_name, name) == 0)
			return sh[i].sh_addr;
	EXPECT(0, "no section %s in the module", name);
	return 0;
}

/* The symbol `name`'s st_value in the module's ELF (sh_addr + offset for a function). */
static uint64_t symbol_value(const zet_debug_event_t *ev, const char *name)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)ev->info.module.moduleBegin;
	const uint64_t size = ev->info.module.moduleEnd - ev->info.module.moduleBegin;
	const Elf64_Ehdr *eh = (const void *)b;
	const Elf64_Shdr *sh = (const void *)(b + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		EXPECT(sh[i].sh_offset + sh[i].sh_size <= size, "bad .symtab");
		const Elf64_Sym *sym = (const void *)(b + sh[i].sh_offset);
		const char *str = (const char *)b + sh[sh[i].sh_link].sh_offset;
		for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
			if (strcmp(str + sym[k].st_name, name) == 0)
				return sym[k].st_value;
	}
	EXPECT(0, "no symbol %s in the module", name);
	return 0;
}

static zet_debug_memory_space_desc_t space(uint64_t addr)
{
	zet_debug_memory_space_desc_t d = {ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC, NULL,
					   ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT, addr};
	return d;
}

static const ze_device_thread_t ALL = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};

/* A module load: the breakpoint bit (dword 0 bit 8) on section + off, then the ack. */
/* Set or clear the breakpoint bit (docs/isa.md section 2) of the instruction at `at`. */
static void set_breakpoint(uint64_t at, bool on)
{
	zet_debug_memory_space_desc_t d = space(at);
	uint32_t dw;
	CHECK(zetDebugReadMemory(session, ALL, &d, 4, &dw));
	dw = on ? dw | 1u << 8 : dw & ~(1u << 8);
	CHECK(zetDebugWriteMemory(session, ALL, &d, 4, &dw));
	uint32_t back;
	CHECK(zetDebugReadMemory(session, ALL, &d, 4, &back));
	EXPECT(back == dw, "breakpoint write read back 0x%x, wrote 0x%x", back, dw);
	printf("breakpoint 0x%llx %s\n", (unsigned long long)at, on ? "set" : "cleared");
}

static uint64_t on_module(const zet_debug_event_t *ev, const char *section, uint32_t off, bool breakpoint)
{
	const uint64_t at = ev->info.module.load + section_addr(ev, section) + off;
	if (breakpoint)
		set_breakpoint(at, true);
	if (ev->flags & ZET_DEBUG_EVENT_FLAG_NEED_ACK)
		CHECK(zetDebugAcknowledgeEvent(session, ev));
	return at;
}

static const uint32_t regset_types[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12};

/* Every register set of a stopped thread (and the bytes at mem) into the dump. */
static void dump_thread(ze_device_thread_t t, uint64_t mem, uint32_t mem_size)
{
	uint32_t n = 0;
	CHECK(zetDebugGetRegisterSetProperties(device, &n, NULL));
	zet_debug_regset_properties_t props[16];
	EXPECT(n <= 16, "%u register sets", n);
	CHECK(zetDebugGetRegisterSetProperties(device, &n, props));
	if (!dump)
		return;
	fprintf(dump, "{\"thread\": [%u, %u, %u, %u], \"regs\": {", t.slice, t.subslice, t.eu, t.thread);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t buf[128 * 32];
		CHECK(zetDebugReadRegisters(session, t, props[i].type, 0, props[i].count, buf));
		fprintf(dump, "%s\"%u\": \"", i ? ", " : "", props[i].type);
		for (uint32_t b = 0; b < props[i].count * props[i].byteSize; b++)
			fprintf(dump, "%02x", buf[b]);
		fprintf(dump, "\"");
	}
	fprintf(dump, "}");
	if (mem_size) {
		uint8_t buf[256];
		zet_debug_memory_space_desc_t d = space(mem);
		CHECK(zetDebugReadMemory(session, t, &d, mem_size, buf));
		fprintf(dump, ", \"mem\": {\"addr\": %llu, \"bytes\": \"", (unsigned long long)mem);
		for (uint32_t b = 0; b < mem_size; b++)
			fprintf(dump, "%02x", buf[b]);
		fprintf(dump, "\"}");
	}
	fprintf(dump, "}\n");
	fflush(dump);
}

static bool same(ze_device_thread_t a, ze_device_thread_t b)
{
	return a.slice == b.slice && a.subslice == b.subslice && a.eu == b.eu && a.thread == b.thread;
}

static void attach(uint32_t pid)
{
	zet_debug_config_t c = {pid};
	CHECK(zetDebugAttach(device, &c, &session));
	if (get_notifier)
		CHECK(get_notifier(session, &notifier));
	printf("attached\n");
	fflush(stdout);
}

/* Events until DETACHED (the target ended); every other event is printed. */
static void until_detached(void)
{
	zet_debug_event_t ev;
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_DETACHED);
	EXPECT(ev.info.detached.reason == ZET_DEBUG_DETACH_REASON_HOST_EXIT, "detach reason %u",
	       (unsigned)ev.info.detached.reason);
	/* Drained and detached: nothing more, and no wait even "forever". */
	CHECK_RESULT(ZE_RESULT_NOT_READY, zetDebugReadEvent(session, UINT64_MAX, &ev));
}

static int mode_errors(uint32_t pid)
{
	zet_device_debug_properties_t p = {ZET_STRUCTURE_TYPE_DEVICE_DEBUG_PROPERTIES, NULL, 0};
	CHECK(zetDeviceGetDebugProperties(device, &p));
	EXPECT(p.flags & ZET_DEVICE_DEBUG_PROPERTY_FLAG_ATTACH, "no ATTACH flag with ZET_ENABLE_PROGRAM_DEBUGGING=1");
	zet_debug_config_t bad0 = {0}, bad = {999999999u}, self = {(uint32_t)getpid()};
	zet_debug_session_handle_t h = NULL;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetDebugAttach(device, NULL, &h));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetDebugAttach(device, &bad0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugAttach(device, &bad0, &h));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugAttach(device, &bad, &h));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugAttach(device, &self, &h));
	attach(pid);
	zet_debug_config_t c = {pid};
	CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugAttach(device, &c, &h)); /* a debugger is attached */
	/* Register sets: the numbering, sizes and access of zesim_ssa.h. */
	uint32_t n = 0;
	CHECK(zetDebugGetRegisterSetProperties(device, &n, NULL));
	EXPECT(n == 11, "%u register sets, expected 11", n);
	zet_debug_regset_properties_t props[11];
	CHECK(zetDebugGetRegisterSetProperties(device, &n, props));
	static const uint32_t count[] = {128, 1, 2, 1, 1, 1, 1, 2, 1, 1, 1},
			      bits[] = {256, 256, 32, 32, 128, 128, 256, 256, 128, 64, 64};
	static const int writable[] = {1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1};
	for (uint32_t i = 0; i < n; i++) {
		EXPECT(props[i].type == regset_types[i] && props[i].count == count[i] && props[i].bitSize == bits[i] &&
			       props[i].byteSize == bits[i] / 8 &&
			       !!(props[i].generalFlags & ZET_DEBUG_REGSET_FLAG_WRITEABLE) == writable[i] &&
			       (props[i].generalFlags & ZET_DEBUG_REGSET_FLAG_READABLE),
		       "register set %u: type %u count %u bits %u flags 0x%x", i, props[i].type, props[i].count,
		       props[i].bitSize, props[i].generalFlags);
	}
	const ze_device_thread_t t0 = {0, 0, 0, 0}, far = {0, 0, 0, 1000};
	uint8_t buf[64];
	CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugReadRegisters(session, t0, 1, 0, 1, buf)); /* running */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugReadRegisters(session, t0, 9, 0, 1, buf)); /* no MME */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugReadRegisters(session, t0, 1, 127, 2, buf));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugWriteRegisters(session, t0, 4, 0, 1, buf)); /* CE: RO */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugWriteRegisters(session, t0, 11, 0, 1, buf)); /* SBA: RO */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugReadRegisters(session, far, 1, 0, 1, buf));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugReadRegisters(session, ALL, 1, 0, 1, buf));
	CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugResume(session, ALL)); /* nothing stopped */
	zet_debug_memory_space_desc_t d = space(0x1000);
	CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugReadMemory(session, t0, &d, 4, buf));
	d.type = (zet_debug_memory_space_type_t)2;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zetDebugReadMemory(session, ALL, &d, 4, buf));
	d.type = ZET_DEBUG_MEMORY_SPACE_TYPE_SLM;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugReadMemory(session, ALL, &d, 4, buf));
	zet_debug_event_t ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = ZET_DEBUG_EVENT_TYPE_MODULE_LOAD;
	ev.flags = ZET_DEBUG_EVENT_FLAG_NEED_ACK;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetDebugAcknowledgeEvent(session, &ev)); /* no such event */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetDebugReadEvent(session, 0, NULL));
	CHECK(zetDebugDetach(session));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetDebugDetach(session));
	/* Detached: a new session may attach. */
	attach(pid);
	CHECK(zetDebugDetach(session));
	printf("errors ok\n");
	return 0;
}

static int mode_disabled(void)
{
	zet_device_debug_properties_t p = {ZET_STRUCTURE_TYPE_DEVICE_DEBUG_PROPERTIES, NULL, 0xff};
	CHECK(zetDeviceGetDebugProperties(device, &p));
	EXPECT(p.flags == 0, "flags 0x%x without ZET_ENABLE_PROGRAM_DEBUGGING", p.flags);
	zet_debug_config_t c = {(uint32_t)getppid()};
	zet_debug_session_handle_t h;
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, zetDebugAttach(device, &c, &h));
	printf("disabled ok\n");
	return 0;
}

/* bp, kill-target, kill-tool: the breakpoint in dbgk. */
static int mode_bp(uint32_t pid, const char *mode, bool modify)
{
	attach(pid);
	zet_debug_event_t ev;
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	const uint64_t bp = on_module(&ev, ".text.dbgk", BP_OFFSET, true);
	uint32_t stops = 0;
	ze_device_thread_t seen[8];
	while (stops < 2) {
		wait_event(&ev, ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED);
		const ze_device_thread_t t = ev.info.thread.thread;
		for (uint32_t i = 0; i < stops; i++)
			EXPECT(!same(seen[i], t), "thread %u.%u.%u.%u reported stopped twice", t.slice, t.subslice, t.eu,
			       t.thread);
		seen[stops++] = t;
		uint32_t cr[4], grf[128 * 8];
		CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_CR, 0, 1, cr));
		CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_GRF, 0, 128, grf));
		EXPECT(cr[1] & 1, "cr0.1 = 0x%x: no breakpoint exception", cr[1]);
		EXPECT(cr[2] == BP_OFFSET, "stopped at ip %u, the breakpoint is at %u", cr[2], BP_OFFSET);
		printf("stop %u.%u.%u.%u ip %u gid %u\n", t.slice, t.subslice, t.eu, t.thread, cr[2], grf[11 * 8]);
		/* The code through the stopped thread: the breakpoint bit is there. */
		uint32_t dw;
		zet_debug_memory_space_desc_t d = space(bp);
		CHECK(zetDebugReadMemory(session, t, &d, 4, &dw));
		EXPECT(dw & (1u << 8), "the instruction at 0x%llx has no breakpoint bit", (unsigned long long)bp);
		/* in[] of the thread: the address is its r7.0 */
		const uint64_t in = grf[7 * 8] | (uint64_t)grf[7 * 8 + 1] << 32;
		dump_thread(t, in + (uint64_t)grf[11 * 8] * 4, 32);
		fflush(stdout);
		if (strcmp(mode, "kill-target") == 0) {
			printf("stopped\n");
			fflush(stdout);
			until_detached();
			printf("kill-target ok\n");
			return 0;
		}
		if (strcmp(mode, "kill-tool") == 0) {
			printf("stopped\n");
			fflush(stdout);
			for (;;)
				pause();
		}
		if (modify && stops == 1) {
			/* r21 (in * 3) := gid * 5: out = gid * 5 + 7 for this thread's items */
			uint32_t r21[8];
			for (int l = 0; l < 8; l++)
				r21[l] = grf[11 * 8 + l] * 5;
			CHECK(zetDebugWriteRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_GRF, 21, 1, r21));
			uint32_t back[8];
			CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_GRF, 21, 1, back));
			EXPECT(memcmp(back, r21, sizeof(r21)) == 0, "r21 read back differs");
			printf("modified gid %u..%u\n", grf[11 * 8], grf[11 * 8 + 7]);
		}
		/* A second interrupt of a stopped thread is refused. */
		CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugInterrupt(session, t));
		CHECK(zetDebugResume(session, t));
		CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugResume(session, t)); /* running now */
	}
	until_detached();
	printf("bp ok\n");
	return 0;
}

/* bp-callee: the target's kernel dbgcall (first module) calls dbg_twice of a second
 * module through calla; the breakpoint is in the callee, 16 bytes in.  A stopped thread's
 * cr0.2 counts from its instruction base, the SBA register set: the callee's address. */
#define CALLEE_BP 16u
static int mode_bp_callee(uint32_t pid)
{
	attach(pid);
	zet_debug_event_t ev;
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	on_module(&ev, ".text.dbgcall", 0, false);
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	const uint64_t callee = ev.info.module.load + symbol_value(&ev, "dbg_twice");
	/* The target launches dbgcall (whose module is acknowledged) with the address of
	 * the callee's module: the driver holds zeModuleGetFunctionPointer until this
	 * module is acknowledged too, so however long the debugger takes to set its
	 * breakpoint, no thread reaches the callee before (half a second makes a driver
	 * that does not wait lose the race every time). */
	usleep(500 * 1000);
	on_module(&ev, ".text.dbgcall", (uint32_t)(symbol_value(&ev, "dbg_twice") - section_addr(&ev, ".text.dbgcall")) +
				      CALLEE_BP, true);
	printf("callee 0x%llx\n", (unsigned long long)callee);
	for (uint32_t stops = 0; stops < 2; stops++) {
		wait_event(&ev, ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED);
		const ze_device_thread_t t = ev.info.thread.thread;
		uint32_t cr[4], grf[128 * 8];
		uint64_t sba;
		CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_CR, 0, 1, cr));
		CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_GRF, 0, 128, grf));
		CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_SBA, 0, 1, &sba));
		EXPECT(cr[1] & 1, "cr0.1 = 0x%x: no breakpoint exception", cr[1]);
		EXPECT(cr[2] == CALLEE_BP && sba == callee, "stopped at 0x%llx + %u, the breakpoint is at 0x%llx + %u",
		       (unsigned long long)sba, cr[2], (unsigned long long)callee, CALLEE_BP);
		printf("stop %u.%u.%u.%u ip %u sba 0x%llx gid %u\n", t.slice, t.subslice, t.eu, t.thread, cr[2],
		       (unsigned long long)sba, grf[11 * 8]);
		dump_thread(t, 0, 0);
		fflush(stdout);
		CHECK(zetDebugResume(session, t));
	}
	until_detached();
	printf("bp-callee ok\n");
	return 0;
}

/* THREAD_STOPPED events until none comes for 3 s: each thread once, into seen[] (1024),
 * the time of the last in *last; each stop an interrupt (bp_ip < 0) or a breakpoint at
 * cr0.2 = bp_ip; every stop dumped. */
static uint32_t collect_stops(ze_device_thread_t *seen, uint64_t *last, int64_t bp_ip)
{
	zet_debug_event_t ev;
	uint32_t stops = 0;
	while (next_event(&ev, 3000) == ZE_RESULT_SUCCESS) {
		if (ev.type == ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE)
			EXPECT(0, "THREAD_UNAVAILABLE while threads stopped");
		if (ev.type != ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED)
			continue;
		const ze_device_thread_t t = ev.info.thread.thread;
		for (uint32_t i = 0; i < stops; i++)
			EXPECT(!same(seen[i], t), "thread %u.%u.%u.%u reported stopped twice", t.slice, t.subslice, t.eu,
			       t.thread);
		EXPECT(stops < 1024, "too many stops");
		seen[stops++] = t;
		*last = now_ms();
		uint32_t cr[4];
		CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_CR, 0, 1, cr));
		if (bp_ip < 0)
			EXPECT((cr[1] & 0x44000000u) && !(cr[1] & 0x7f), "cr0.1 = 0x%x: not an interrupt", cr[1]);
		else
			EXPECT((cr[1] & 1) && cr[2] == (uint32_t)bp_ip, "cr0.1 = 0x%x, cr0.2 = 0x%x: not the breakpoint at 0x%x",
			       cr[1], cr[2], (uint32_t)bp_ip);
		dump_thread(t, 0, 0);
	}
	return stops;
}

static int mode_interrupt(uint32_t pid)
{
	attach(pid);
	zet_debug_event_t ev;
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	on_module(&ev, ".text.spin", 0, false);
	/* Let the kernel start (the target launches once the module is acknowledged). */
	usleep(300000);
	const uint64_t t0 = now_ms();
	CHECK(zetDebugInterrupt(session, ALL));
	/* No second interrupt: pending (NOT_READY), or already answered by every thread
	 * stopping (NOT_AVAILABLE); the case "unavailable" checks NOT_READY for certain. */
	const ze_result_t again = zetDebugInterrupt(session, ALL);
	EXPECT(again == ZE_RESULT_NOT_READY || again == ZE_RESULT_ERROR_NOT_AVAILABLE,
	       "a second interrupt of all threads returned 0x%x", (unsigned)again);
	ze_device_thread_t seen[1024];
	uint64_t last = t0;
	const uint32_t stops = collect_stops(seen, &last, -1);
	EXPECT(stops > 0, "no thread stopped after the interrupt");
	printf("interrupt stopped %u threads (the last %llu ms after the interrupt)\n", stops,
	       (unsigned long long)(last - t0));
	CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugInterrupt(session, seen[0])); /* already stopped */
	CHECK(zetDebugResume(session, ALL));
	until_detached();
	printf("interrupt ok\n");
	return 0;
}

/* bp-running: a breakpoint set in the loop of a kernel that is already running.  Interrupt
 * all; with every thread stopped, set the breakpoint bit of spin's loop instruction;
 * resume: each thread stops there (the hardware fetched the changed code, although it
 * had decoded that instruction many times); clear it, resume, the kernel completes. */
#define SPIN_LOOP 0x30u
static int mode_bp_running(uint32_t pid)
{
	attach(pid);
	zet_debug_event_t ev;
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	const uint64_t loop = on_module(&ev, ".text.spin", SPIN_LOOP, false);
	usleep(300000); /* the kernel runs its loop */
	uint64_t t0 = now_ms(), last;
	CHECK(zetDebugInterrupt(session, ALL));
	ze_device_thread_t seen[1024], hit[1024];
	const uint32_t stops = collect_stops(seen, &last, -1);
	EXPECT(stops > 0, "no thread stopped after the interrupt");
	set_breakpoint(loop, true);
	CHECK(zetDebugResume(session, ALL));
	const uint32_t hits = collect_stops(hit, &last, SPIN_LOOP);
	EXPECT(hits == stops, "%u threads stopped at the breakpoint set while they ran, %u were interrupted", hits, stops);
	printf("bp-running: %u threads interrupted, %u stopped at the loop's new breakpoint (%llu ms)\n", stops, hits,
	       (unsigned long long)(last - t0));
	set_breakpoint(loop, false);
	CHECK(zetDebugResume(session, ALL));
	until_detached();
	printf("bp-running ok\n");
	return 0;
}

static zet_debug_event_t pending_module;

static int mode_unavailable(uint32_t pid)
{
	attach(pid);
	/* Nothing runs yet: an interrupt of one thread is pending until it times out. */
	const ze_device_thread_t t = {0, 0, 0, 0};
	CHECK(zetDebugInterrupt(session, t));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zetDebugInterrupt(session, t));
	zet_debug_event_t ev;
	bool unavailable = false, loaded = false;
	while (!unavailable || !loaded) {
		EXPECT(next_event(&ev, EVENT_MS) == ZE_RESULT_SUCCESS, "no THREAD_UNAVAILABLE within %u ms", EVENT_MS);
		if (ev.type == ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE) {
			EXPECT(!unavailable, "two THREAD_UNAVAILABLE events");
			EXPECT(same(ev.info.thread.thread, t), "THREAD_UNAVAILABLE names another thread");
			unavailable = true;
			/* answered: a new interrupt is no longer pending */
		} else if (ev.type == ZET_DEBUG_EVENT_TYPE_MODULE_LOAD) {
			/* acknowledged only after the interrupt timed out: nothing runs before */
			EXPECT(!loaded, "two MODULE_LOAD events");
			loaded = true;
			if (unavailable)
				on_module(&ev, ".text.dbgk", 0, false);
			else
				memcpy(&pending_module, &ev, sizeof(ev));
		}
		if (unavailable && loaded && pending_module.type)
			on_module(&pending_module, ".text.dbgk", 0, false);
		EXPECT(ev.type != ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED, "a thread stopped");
	}
	until_detached();
	printf("unavailable ok\n");
	return 0;
}

/* slm: at the breakpoint on slmk's SLM load, the group's SLM through the SIP's
 * commands: an aligned read, an unaligned one, one of several chunks, one past the
 * group's SLM; then an unaligned write the kernel then loads (debug_e2e.py predicts). */
static int mode_slm(uint32_t pid)
{
	attach(pid);
	zet_debug_event_t ev;
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	on_module(&ev, ".text.slmk", 96, true);
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED);
	const ze_device_thread_t t = ev.info.thread.thread;
	zet_debug_memory_space_desc_t d = {ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC, NULL,
					   ZET_DEBUG_MEMORY_SPACE_TYPE_SLM, 0};
	uint32_t slm[64];
	CHECK(zetDebugReadMemory(session, t, &d, 32, slm));
	for (uint32_t l = 0; l < 8; l++)
		EXPECT(slm[l] == l * 7 + 3, "SLM dword %u = %u, the kernel stored %u", l, slm[l], l * 7 + 3);
	uint8_t part[13];
	d.address = 5;
	CHECK(zetDebugReadMemory(session, t, &d, sizeof(part), part));
	EXPECT(memcmp(part, (uint8_t *)slm + 5, sizeof(part)) == 0, "unaligned SLM read differs");
	d.address = 0;
	CHECK(zetDebugReadMemory(session, t, &d, 256, slm)); /* three chunks */
	for (uint32_t l = 0; l < 8; l++)
		EXPECT(slm[l] == l * 7 + 3, "SLM dword %u = %u in the long read", l, slm[l]);
	d.address = 252;
	CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE, zetDebugReadMemory(session, t, &d, 8, slm)); /* past its SLM */
	uint8_t w[30];
	for (int k = 0; k < 30; k++)
		w[k] = (uint8_t)(0xa0 + k);
	d.address = 1;
	CHECK(zetDebugWriteMemory(session, t, &d, sizeof(w), w));
	printf("slm-write 1 30 a0\n");
	CHECK(zetDebugResume(session, t));
	until_detached();
	printf("slm ok\n");
	return 0;
}

static int mode_fault(uint32_t pid)
{
	attach(pid);
	zet_debug_event_t ev;
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	on_module(&ev, ".text.fault", 0, false);
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_PAGE_FAULT);
	printf("pagefault 0x%llx\n", (unsigned long long)ev.info.page_fault.address);
	wait_event(&ev, ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED);
	const ze_device_thread_t t = ev.info.thread.thread;
	uint32_t cr[4];
	CHECK(zetDebugReadRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_CR, 0, 1, cr));
	EXPECT(cr[1] & 4, "cr0.1 = 0x%x: no page fault", cr[1]);
	EXPECT(cr[2] == FAULT_OFFSET, "stopped at ip %u, the load is at %u", cr[2], FAULT_OFFSET);
	dump_thread(t, 0, 0);
	cr[2] += 16; /* skip the load */
	CHECK(zetDebugWriteRegisters(session, t, ZEX_DEBUG_REGSET_TYPE_CR, 0, 1, cr));
	CHECK(zetDebugResume(session, t));
	until_detached();
	printf("fault ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	EXPECT(argc >= 2, "usage: test_debug_tool MODE [PID] [--dump FILE] [--modify] [--notifier]");
	const char *mode = argv[1];
	const uint32_t pid = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 0;
	bool modify = false, use_notifier = false;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
			EXPECT((dump = fopen(argv[++i], "w")) != NULL, "cannot write %s", argv[i]);
		else if (strcmp(argv[i], "--modify") == 0)
			modify = true;
		else if (strcmp(argv[i], "--notifier") == 0)
			use_notifier = true;
	}
	signal(SIGPIPE, SIG_IGN);
	CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	uint32_t n = 1;
	ze_driver_handle_t drv;
	CHECK(zeDriverGet(&n, &drv));
	n = 1;
	CHECK(zeDeviceGet(drv, &n, &device));
	if (strcmp(mode, "disabled") == 0)
		return mode_disabled();
	if (strcmp(mode, "errors") == 0)
		return mode_errors(pid);
	int rc;
	if (use_notifier) {
		/* ZEX_experimental_debug_event_notifier */
		uint32_t ne = 0;
		CHECK(zeDriverGetExtensionProperties(drv, &ne, NULL));
		ze_driver_extension_properties_t ext[32];
		EXPECT(ne <= 32, "%u extensions", ne);
		CHECK(zeDriverGetExtensionProperties(drv, &ne, ext));
		bool found = false;
		for (uint32_t i = 0; i < ne; i++)
			found |= strcmp(ext[i].name, ZEX_DEBUG_EVENT_NOTIFIER_EXP_NAME) == 0;
		EXPECT(found, "%s is not listed", ZEX_DEBUG_EVENT_NOTIFIER_EXP_NAME);
		CHECK(zeDriverGetExtensionFunctionAddress(drv, ZEX_DEBUG_GET_EVENT_NOTIFIER_EXP_NAME,
							  (void **)&get_notifier));
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, get_notifier(NULL, &notifier));
	}
	if (strcmp(mode, "interrupt") == 0)
		rc = mode_interrupt(pid);
	else if (strcmp(mode, "unavailable") == 0)
		rc = mode_unavailable(pid);
	else if (strcmp(mode, "fault") == 0)
		rc = mode_fault(pid);
	else if (strcmp(mode, "slm") == 0)
		rc = mode_slm(pid);
	else if (strcmp(mode, "bp-callee") == 0)
		rc = mode_bp_callee(pid);
	else if (strcmp(mode, "bp-running") == 0)
		rc = mode_bp_running(pid);
	else
		rc = mode_bp(pid, mode, modify);
	if (session)
		CHECK(zetDebugDetach(session));
	if (dump)
		fclose(dump);
	return rc;
}
