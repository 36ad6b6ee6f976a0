// jemalloc's options, which it reads at its first allocation (jemalloc(3), "malloc_conf"; the
// MALLOC_CONF environment variable still adds to them). Compiled into the binaries linked with
// jemalloc only (fdyno_use_malloc in CMakeLists.txt).
//
// percpu_arena:percpu: one arena per CPU, each thread allocating from the arena of the CPU it
// runs on. jemalloc's default, four arenas per CPU, set up eight on two cores as the 45 threads
// of an idle server allocated for the first time: 0.6 MB more idle memory (bench/startup.py,
// 4.2 MB anonymous against 3.6). Arenas per CPU still scale with the cores.
extern "C" {
__attribute__((used)) const char* malloc_conf = "percpu_arena:percpu";
}
