/*
 * tensorjit-codegen-cost: LLVM's code generation alone, for a module the
 * library emitted (`tensorjit OP ... --dump-ir=opt > K.ll`), for any x86
 * CPU LLVM knows. For development, not installed.
 *
 *   tensorjit-codegen-cost [--cpu NAME] [--level 0..3] [--runs N]
 *                          [--llvm-args "OPTS"] K.ll
 *
 * Why a tool of its own: a kernel's compile is mostly code generation
 * (docs/performance.md, 'A compile counted in instructions'), and the
 * counts that compare two builds come from callgrind. Under valgrind the
 * library sees valgrind's CPU (no AVX-512: the kernel of a 256-bit host),
 * so bench/compile_cost.sh counts that kernel on every host. Here the
 * module is the one the host built, and the target machine is the CPU
 * named (sapphirerapids for the device's Xeon, znver4 for the AMD host),
 * whatever runs the tool. bench/codegen_cost.sh counts it under callgrind.
 * Each run parses the module again into a new context (parsing is outside
 * the time printed) and emits an object file to memory, with the engine's
 * relocation model and code model.
 */
#include <llvm-c/Core.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct cg_opts {
    const char *cpu; /* NULL: the host's name and features */
    const char *llvm_args;
    const char *file;
    int level, runs;
} cg_opts;

static int cg_usage(void)
{
    fprintf(stderr, "usage: tensorjit-codegen-cost [--cpu NAME] [--level 0..3] [--runs N] "
                    "[--llvm-args \"OPTS\"] K.ll\n");
    return 2;
}

static int cg_parse(int argc, char **argv, cg_opts *o)
{
    *o = (cg_opts){.level = 2, .runs = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--cpu") == 0 && v)
            o->cpu = argv[++i];
        else if (strcmp(a, "--llvm-args") == 0 && v)
            o->llvm_args = argv[++i];
        else if (strcmp(a, "--level") == 0 && v && v[0] >= '0' && v[0] <= '3' && !v[1])
            o->level = argv[++i][0] - '0';
        else if (strcmp(a, "--runs") == 0 && v && atoi(v) >= 1 && atoi(v) <= 1000)
            o->runs = atoi(argv[++i]);
        else if (a[0] != '-' && !o->file)
            o->file = a;
        else
            return -1;
    }
    return o->file ? 0 : -1;
}

/* LLVM's options are global and parsed once, as TENSORJIT_LLVM_ARGS is. */
static void cg_llvm_args(const char *args)
{
    static char buf[1024];
    const char *argv[32];
    int argc = 0;
    if (!args)
        return;
    snprintf(buf, sizeof buf, "%s", args);
    argv[argc++] = "tensorjit-codegen-cost";
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && argc < 32;
         t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    LLVMParseCommandLineOptions(argc, argv, "tensorjit-codegen-cost");
}

/* LLVM's own fatal errors: a --cpu name LLVM does not know (it warns
 * "not a recognized processor", then generates code for a CPU without
 * 64-bit mode and aborts) ends here as a failed run, not a core dump. */
static void cg_fatal(const char *reason)
{
    fprintf(stderr, "tensorjit-codegen-cost: LLVM: %s (is --cpu a CPU LLVM knows?)\n", reason);
    exit(1);
}

static LLVMTargetMachineRef cg_target_machine(const cg_opts *o, char **cpu_used)
{
    static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                                 LLVMCodeGenLevelDefault,
                                                 LLVMCodeGenLevelAggressive};
    char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
    char *cpu = o->cpu ? strdup(o->cpu) : LLVMGetHostCPUName();
    char *features = o->cpu ? strdup("") : LLVMGetHostCPUFeatures();
    LLVMTargetRef target;
    LLVMTargetMachineRef tm = NULL;
    if (!cpu || !features)
        fprintf(stderr, "tensorjit-codegen-cost: out of memory\n");
    else if (LLVMGetTargetFromTriple(triple, &target, &err) != 0)
        fprintf(stderr, "tensorjit-codegen-cost: no target for %s: %s\n", triple, err);
    else
        tm = LLVMCreateTargetMachine(target, triple, cpu, features, levels[o->level],
                                     LLVMRelocPIC, LLVMCodeModelSmall);
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(triple);
    if (o->cpu) {
        free(features);
        *cpu_used = cpu;
    } else {
        LLVMDisposeMessage(features);
        *cpu_used = strdup(cpu ? cpu : "?");
        LLVMDisposeMessage(cpu);
    }
    return tm;
}

static double cg_thread_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One run: the file parsed into a new context, then emitted; the CPU time
 * of the emission in *ms. 0, or -1 with the reason printed. */
static int cg_run(LLVMTargetMachineRef tm, const char *file, double *ms)
{
    char *err = NULL;
    LLVMMemoryBufferRef in, out;
    LLVMModuleRef m;
    if (LLVMCreateMemoryBufferWithContentsOfFile(file, &in, &err) != 0) {
        fprintf(stderr, "tensorjit-codegen-cost: %s: %s\n", file, err);
        LLVMDisposeMessage(err);
        return -1;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    int rc = -1;
    if (LLVMParseIRInContext(ctx, in, &m, &err) != 0) { /* takes the buffer */
        fprintf(stderr, "tensorjit-codegen-cost: %s: %s\n", file, err);
    } else {
        double t0 = cg_thread_ms();
        if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, &out) != 0) {
            fprintf(stderr, "tensorjit-codegen-cost: %s: %s\n", file, err);
        } else {
            *ms = cg_thread_ms() - t0;
            LLVMDisposeMemoryBuffer(out);
            rc = 0;
        }
        LLVMDisposeModule(m);
    }
    LLVMDisposeMessage(err);
    LLVMContextDispose(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    cg_opts o;
    if (cg_parse(argc, argv, &o) != 0)
        return cg_usage();
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMInstallFatalErrorHandler(cg_fatal);
    cg_llvm_args(o.llvm_args);
    char *cpu = NULL;
    LLVMTargetMachineRef tm = cg_target_machine(&o, &cpu);
    if (!tm) {
        free(cpu);
        return 1;
    }
    double best = 0, ms = 0;
    int rc = 0;
    for (int i = 0; i < o.runs && rc == 0; i++) {
        rc = cg_run(tm, o.file, &ms);
        best = i == 0 || ms < best ? ms : best;
    }
    if (rc == 0)
        printf("%s: %d code generation(s) for %s at level %d, the best %.3f ms of CPU time\n",
               o.file, o.runs, cpu ? cpu : "?", o.level, best);
    free(cpu);
    LLVMDisposeTargetMachine(tm);
    LLVMShutdown(); /* where -time-passes and -stats print their reports */
    return rc == 0 ? 0 : 1;
}
