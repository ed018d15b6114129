/* Program-debug latency (bench/debug.py): the debugger side.
 *
 *     debug_bench PID THREADS [ROUNDS]
 *
 * Attaches to PID (test_debug_target in spin mode), acknowledges its module, lets the
 * kernel run, then times on the host: zetDebugInterrupt(all) until the THREADS-th
 * THREAD_STOPPED; reading every register set of one stopped thread (the mean of
 * ROUNDS, default 100); zetDebugResume(all).  Prints one line per figure. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#define CHECK(call)                                                                                                   \
	do {                                                                                                          \
		ze_result_t r_ = (call);                                                                              \
		if (r_ != ZE_RESULT_SUCCESS) {                                                                        \
			fprintf(stderr, "debug_bench: %s returned 0x%x\n", #call, (unsigned)r_);                      \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: debug_bench PID THREADS [ROUNDS]\n");
		return 2;
	}
	const uint32_t pid = (uint32_t)strtoul(argv[1], NULL, 10), want = (uint32_t)strtoul(argv[2], NULL, 10);
	const int rounds = argc > 3 ? atoi(argv[3]) : 100;
	CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	uint32_t n = 1;
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	CHECK(zeDriverGet(&n, &drv));
	n = 1;
	CHECK(zeDeviceGet(drv, &n, &dev));
	zet_debug_config_t c = {pid};
	zet_debug_session_handle_t s;
	CHECK(zetDebugAttach(dev, &c, &s));
	printf("attached\n");
	fflush(stdout);
	zet_debug_event_t ev;
	do
		CHECK(zetDebugReadEvent(s, 60000, &ev));
	while (ev.type != ZET_DEBUG_EVENT_TYPE_MODULE_LOAD);
	if (ev.flags & ZET_DEBUG_EVENT_FLAG_NEED_ACK)
		CHECK(zetDebugAcknowledgeEvent(s, &ev));
	usleep(500000); /* the kernel is running by now (it takes seconds) */

	const ze_device_thread_t all = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
	const double t0 = now_ms();
	CHECK(zetDebugInterrupt(s, all));
	uint32_t stops = 0;
	double last = t0, first_at = 0, half_at = 0;
	ze_device_thread_t first = all;
	while (stops < want) {
		const ze_result_t r = zetDebugReadEvent(s, 5000, &ev);
		if (r == ZE_RESULT_NOT_READY)
			break;
		CHECK(r);
		if (ev.type == ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED) {
			if (!stops) {
				first = ev.info.thread.thread;
				first_at = now_ms();
			}
			stops++;
			last = now_ms();
			if (stops == want / 2)
				half_at = last;
		}
	}
	printf("interrupt-all to the last THREAD_STOPPED: %.1f ms (%u of %u threads; the first after %.1f ms, half "
	       "after %.1f ms)\n", last - t0, stops, want, first_at - t0, half_at - t0);
	if (!stops)
		return 1;

	uint32_t nsets = 0;
	CHECK(zetDebugGetRegisterSetProperties(dev, &nsets, NULL));
	zet_debug_regset_properties_t props[16];
	if (nsets > 16)
		nsets = 16;
	CHECK(zetDebugGetRegisterSetProperties(dev, &nsets, props));
	static uint8_t buf[128 * 32];
	uint32_t bytes = 0;
	const double r0 = now_ms();
	for (int k = 0; k < rounds; k++)
		for (uint32_t i = 0; i < nsets; i++) {
			CHECK(zetDebugReadRegisters(s, first, props[i].type, 0, props[i].count, buf));
			if (!k)
				bytes += props[i].count * props[i].byteSize;
		}
	printf("every register set of one stopped thread (%u sets, %u bytes): %.3f ms (mean of %d)\n", nsets, bytes,
	       (now_ms() - r0) / rounds, rounds);
	const double q0 = now_ms();
	CHECK(zetDebugResume(s, all));
	printf("resume-all of %u threads: %.1f ms\n", stops, now_ms() - q0);
	fflush(stdout);
	do {
		const ze_result_t r = zetDebugReadEvent(s, 120000, &ev);
		if (r != ZE_RESULT_SUCCESS)
			break;
	} while (ev.type != ZET_DEBUG_EVENT_TYPE_DETACHED);
	CHECK(zetDebugDetach(s));
	return 0;
}
