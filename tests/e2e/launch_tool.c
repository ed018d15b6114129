/* A stand-in for a profiler's LD_PRELOAD library (test_launcher.c): it only
 * has to be loaded, which the target checks by this symbol. */
__attribute__((visibility("default"))) int e2e_tool_marker(void) { return 42; }
