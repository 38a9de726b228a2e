/* A host program for OpenCL kernels with the signature of `render_opencl`:
 * shapetrace_materialize(__global const T *src, __global T *dst,
 *                        __global const long *syms, const T pad).
 *
 * It reads commands from stdin and answers each on stdout, one line per command:
 *   probe
 *       -> "platform NAME; device NAME" (or "none WHY" and exit status 4 at start-up)
 *   program NBYTES\n<NBYTES of OpenCL C>
 *       -> "built", or "build-failed CODE" followed by the build log and a line "."
 *   run ESIZE G0 G1 G2 L0 L1 L2 NSYMS SYM.. PADHEX SRCBYTES SRCHEX DSTBYTES
 *       -> "ok DSTHEX" or "err CODE WHAT"; runs the last program built, global work size
 *          G (work-items) and local size L; a zero global size launches nothing. The
 *          destination starts as 0xff bytes, so elements the kernel never writes show.
 * Byte strings are hex, two digits a byte ("-" for none). One context, queue and device
 * serve every command, so that many programs cost one start-up. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_context ctx;
static cl_command_queue queue;
static cl_device_id device;
static cl_program program;
static cl_kernel kernel;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

/* The next whitespace-separated word into buf (at most cap - 1 bytes); 0 at the end. */
static int word(char *buf, size_t cap) {
    int c;
    size_t n = 0;
    do {
        c = getchar();
    } while (c != EOF && isspace(c));
    if (c == EOF) return 0;
    while (c != EOF && !isspace(c)) {
        if (n + 1 < cap) buf[n++] = (char)c;
        c = getchar();
    }
    buf[n] = 0;
    return 1;
}

static long long number(void) {
    char buf[64];
    if (!word(buf, sizeof buf)) {
        fprintf(stderr, "unexpected end of input\n");
        exit(2);
    }
    return strtoll(buf, NULL, 10);
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    fprintf(stderr, "bad hex digit %d\n", c);
    exit(2);
}

/* n bytes as 2n hex digits after whitespace, or "-" when n is 0. */
static unsigned char *hexbytes(size_t n) {
    unsigned char *p = xmalloc(n);
    size_t k;
    int c;
    do {
        c = getchar();
    } while (c != EOF && isspace(c));
    if (n == 0) {
        if (c != '-') exit(2);
        return p;
    }
    for (k = 0; k < n; ++k) {
        int hi = k == 0 ? c : getchar();
        int lo = getchar();
        p[k] = (unsigned char)(hexval(hi) * 16 + hexval(lo));
    }
    return p;
}

static void release_program(void) {
    if (kernel) clReleaseKernel(kernel);
    if (program) clReleaseProgram(program);
    kernel = NULL;
    program = NULL;
}

static void build(size_t n) {
    char *src = xmalloc(n + 1);
    size_t got;
    cl_int err;
    /* word() consumed the newline after the byte count */
    got = fread(src, 1, n, stdin);
    if (got != n) exit(2);
    src[n] = 0;
    release_program();
    program = clCreateProgramWithSource(ctx, 1, (const char **)&src, &n, &err);
    free(src);
    if (err != CL_SUCCESS) {
        printf("build-failed %d\nclCreateProgramWithSource\n.\n", (int)err);
        return;
    }
    err = clBuildProgram(program, 1, &device, "-Werror", NULL, NULL);
    if (err == CL_SUCCESS) kernel = clCreateKernel(program, "shapetrace_materialize", &err);
    if (err != CL_SUCCESS) {
        size_t len = 0;
        char *log;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        log = xmalloc(len + 1);
        log[0] = 0;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = 0;
        printf("build-failed %d\n%s\n.\n", (int)err, log);
        free(log);
        release_program();
        return;
    }
    printf("built\n");
}

static cl_mem buffer(cl_mem_flags flags, size_t n, void *host, cl_int *err) {
    return clCreateBuffer(ctx, flags | CL_MEM_COPY_HOST_PTR, n ? n : 1, host, err);
}

static void run(void) {
    size_t esize = (size_t)number(), global[3], local[3], k, nsyms, lsrc, ldst;
    int64_t *syms;
    unsigned char *pad, *src, *dst;
    cl_mem bsrc = NULL, bdst = NULL, bsyms = NULL;
    cl_int err = CL_SUCCESS;
    const char *what = "";
    for (k = 0; k < 3; ++k) global[k] = (size_t)number();
    for (k = 0; k < 3; ++k) local[k] = (size_t)number();
    nsyms = (size_t)number();
    syms = xmalloc(8 * (nsyms + 1));
    for (k = 0; k < nsyms; ++k) syms[k] = number();
    pad = hexbytes(esize);
    lsrc = (size_t)number();
    src = hexbytes(lsrc);
    ldst = (size_t)number();
    dst = xmalloc(ldst);
    memset(dst, 0xff, ldst);
    if (!kernel) {
        printf("err 0 no-program\n");
        goto done;
    }
#define STEP(call, name) \
    do {                 \
        what = name;     \
        call;            \
        if (err != CL_SUCCESS) goto fail; \
    } while (0)
    STEP(bsrc = buffer(CL_MEM_READ_ONLY, lsrc, src, &err), "clCreateBuffer(src)");
    STEP(bdst = buffer(CL_MEM_READ_WRITE, ldst, dst, &err), "clCreateBuffer(dst)");
    STEP(bsyms = buffer(CL_MEM_READ_ONLY, 8 * nsyms, syms, &err), "clCreateBuffer(syms)");
    STEP(err = clSetKernelArg(kernel, 0, sizeof bsrc, &bsrc), "clSetKernelArg(src)");
    STEP(err = clSetKernelArg(kernel, 1, sizeof bdst, &bdst), "clSetKernelArg(dst)");
    STEP(err = clSetKernelArg(kernel, 2, sizeof bsyms, &bsyms), "clSetKernelArg(syms)");
    STEP(err = clSetKernelArg(kernel, 3, esize, pad), "clSetKernelArg(pad)");
    if (global[0] && global[1] && global[2]) {
        STEP(err = clEnqueueNDRangeKernel(queue, kernel, 3, NULL, global, local, 0, NULL, NULL),
             "clEnqueueNDRangeKernel");
    }
    if (ldst) {
        STEP(err = clEnqueueReadBuffer(queue, bdst, CL_TRUE, 0, ldst, dst, 0, NULL, NULL),
             "clEnqueueReadBuffer");
    }
    STEP(err = clFinish(queue), "clFinish");
#undef STEP
    printf("ok ");
    if (ldst == 0) printf("-");
    for (k = 0; k < ldst; ++k) printf("%02x", dst[k]);
    printf("\n");
    goto done;
fail:
    printf("err %d %s\n", (int)err, what);
done:
    if (bsrc) clReleaseMemObject(bsrc);
    if (bdst) clReleaseMemObject(bdst);
    if (bsyms) clReleaseMemObject(bsyms);
    free(syms);
    free(pad);
    free(src);
    free(dst);
}

int main(void) {
    cl_platform_id platforms[16];
    cl_uint nplat = 0, p;
    cl_int err;
    char cmd[32], pname[256] = "", dname[256] = "";
    err = clGetPlatformIDs(16, platforms, &nplat);
    if (err != CL_SUCCESS || nplat == 0) {
        printf("none no OpenCL platform (clGetPlatformIDs: %d)\n", (int)err);
        return 4;
    }
    for (p = 0; p < nplat; ++p) {
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &device, NULL) == CL_SUCCESS) break;
    }
    if (p == nplat) {
        printf("none no OpenCL device on %u platforms\n", (unsigned)nplat);
        return 4;
    }
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        printf("none clCreateContext: %d\n", (int)err);
        return 4;
    }
    queue = clCreateCommandQueue(ctx, device, 0, &err);
    if (err != CL_SUCCESS) {
        printf("none clCreateCommandQueue: %d\n", (int)err);
        return 4;
    }
    while (word(cmd, sizeof cmd)) {
        if (strcmp(cmd, "probe") == 0) {
            printf("platform %s; device %s\n", pname, dname);
        } else if (strcmp(cmd, "program") == 0) {
            build((size_t)number());
        } else if (strcmp(cmd, "run") == 0) {
            run();
        } else {
            fprintf(stderr, "unknown command %s\n", cmd);
            return 2;
        }
        fflush(stdout);
    }
    release_program();
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return 0;
}
