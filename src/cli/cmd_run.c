/*
 * cmd_run.c - `memtrace run [OPTIONS] -- CMD ARGS...`: run a program with
 * the native heap profiler (libmemtrace_preload.so) preloaded, so that its
 * malloc family is sampled into a trace; wait for it, say where the trace
 * went and exit with the program's status (or end by the signal that
 * killed it).
 *
 * Everything is passed to the profiler through the environment (the same
 * variables work without this wrapper, see docs/PROFILER.md). Statically
 * linked programs are refused: nothing can be preloaded into them; so are
 * programs that the loader runs in secure-execution mode, where it ignores
 * LD_PRELOAD.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "memtrace/profiler.h"
#include "util/numtext.h"

/* The lowest rate run takes: one sample per 7.1 PiB allocated. The
 * profiler draws its gaps between samples up to 10^17 words, so a lower
 * rate would not be the rate the trace says (and samples nothing). */
#define MIN_RATE 1e-15

#ifndef MT_BIN_TO_LIBDIR
#define MT_BIN_TO_LIBDIR "../lib"
#endif
/* The preload library's soname (set by CMakeLists.txt from the version). */
#ifndef MT_PRELOAD_SONAME
#define MT_PRELOAD_SONAME "libmemtrace_preload.so.0"
#endif

void usage_run(FILE *out)
{
    fputs(
            "Usage: memtrace run [OPTIONS] [--] CMD [ARGS...]\n"
            "\n"
            "Run CMD with the native heap profiler preloaded: its malloc, calloc,\n"
            "realloc, free, the aligned variants and C++ new/delete are sampled\n"
            "(on average one sample per 1/RATE words allocated) into a trace with\n"
            "the backtrace of every sampled allocation, resolved to functions,\n"
            "files and lines (inlined functions included), and the release of\n"
            "every sampled object. Every memtrace command reads the trace.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE     write the trace to FILE (default\n"
            "                        memtrace.PID.ctf in the current directory,\n"
            "                        PID the program's process id); %p in FILE\n"
            "                        stands for the process id\n"
            "  --rate R              sampling rate per 8-byte word, 1e-15 <= R <= 1\n"
            "                        (default $MEMTRACE_RATE when set, else 1e-5:\n"
            "                        a sample per ~781 KiB)\n"
            "  --every BYTES         one sample per BYTES allocated on average, from\n"
            "                        8 to 8e15 (7.1 PiB)\n"
            "                        (rate 8/BYTES; suffixes as the filters':\n"
            "                        b or B; k, m, g, t in either case, alone or\n"
            "                        followed by iB or B, for powers of 1024)\n"
            "  --context TEXT        free text stored in the trace (memtrace info),\n"
            "                        up to 16384 bytes (default $MEMTRACE_CONTEXT)\n"
            "  --follow-fork         forked children keep tracing, each into its\n"
            "                        own file FILE-without-.ctf.CHILDPID.ctf\n"
            "                        (default: children stop tracing)\n"
            "  --follow-exec         programs started by CMD (and theirs) are\n"
            "                        traced too, each into its own file named the\n"
            "                        same way (default: they run untraced)\n"
            "  -h, --help            show this help\n"
            "\n"
            "The profiler library is $MEMTRACE_PRELOAD when that is set and not\n"
            "empty (and only then); else " MT_PRELOAD_SONAME " is looked for next to\n"
            "this program, then in the library directory of its installation.\n"
            "CMD is looked up in PATH (a script without a #! line is run by\n"
            "/bin/sh). A program CMD execs in its own place\n"
            "(env, nice, a wrapper script's 'exec prog', pyenv's shims) is traced\n"
            "into FILE, replacing CMD's trace: the program that ends up running\n"
            "is the one traced. Statically linked programs cannot be profiled\n"
            "(nothing can be preloaded into them) and are refused, as are\n"
            "programs that run with other privileges than the caller's\n"
            "(set-user-ID, set-group-ID, file capabilities: the loader ignores\n"
            "LD_PRELOAD in them) and programs whose malloc cannot be replaced\n"
            "(one they define themselves, or a sanitizer's: AddressSanitizer).\n"
            "The program's output is left alone; the profiler writes to standard\n"
            "error only if it cannot trace (bad setting, file cannot be opened,\n"
            "disk full), and the program then runs on untraced.\n"
            "Signals sent to memtrace run (SIGINT, SIGQUIT, SIGTERM, SIGHUP,\n"
            "SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH) are passed on to the program,\n"
            "but for those the terminal sends (^C, ^\\, hangup, resize), which the\n"
            "program gets itself. Descriptors closed for memtrace run are closed\n"
            "for the program.\n"
            "\n"
            "Exit status: the program's. If a signal kills the program, memtrace\n"
            "run says so (but for SIGINT and SIGPIPE), then ends itself by the\n"
            "same signal, as if it were the program (a shell's $? is 128+N for\n"
            "signal N; a ^C stops the script or loop that ran it). 2 bad usage;\n"
            "1 if the program is missing or not executable, the profiler cannot\n"
            "be found or used, or the trace cannot be written where asked (all\n"
            "checked first, but for a FIFO's reader: only the program can open a\n"
            "FIFO, and without a reader it runs untraced); 126 if the program\n"
            "cannot be executed all the same, 127 if the interpreter its #! line\n"
            "names is missing (as shells say). 'trace written' is said only of\n"
            "a file this run wrote or changed.\n",
            out);
}

static int parse_bytes(const char *s, double *out)
{
    char *end;
    const char *e;
    if (!mt_plain_number(s, &e))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (end != e)               /* (strtod read on: "0x10") */
        return -1;
    if (end == s || errno)
        return -1;
    double unit = mt_size_unit(end);    /* (the filters' units) */
    v *= unit;
    if (unit == 0 || !(v >= 8) || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int find_preload(char *out, size_t size)   /* size >= PATH_MAX + 64 */
{
    const char *env = getenv("MEMTRACE_PRELOAD");
    if (env && *env) {
        if (!is_file(env))
            return -1;
        if (env[0] == '/')
            snprintf(out, size, "%s", env);
        else if (!realpath(env, out))
            return -1;
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 64);
    if (k <= 0)
        return -1;
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    const char *dirs[] = {"", ("/" MT_BIN_TO_LIBDIR), "/../lib"};   /* (one string) */
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(out, size, "%s%s/" MT_PRELOAD_SONAME, exe, dirs[i]);
        if (is_file(out))
            return 0;
    }
    return -1;
}

/* CMD as execvp would find it, into out: an executable file (not a
 * directory); -1 if not found. */
static int resolve(const char *cmd, char *out, size_t size)
{
    if (strchr(cmd, '/')) {
        snprintf(out, size, "%s", cmd);
        return is_file(out) && access(out, X_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t k = strcspn(path, ":");
        snprintf(out, size, "%.*s/%s", (int)k ? (int)k : 1, k ? path : ".", cmd);
        if (is_file(out) && access(out, X_OK) == 0)
            return 0;
        path += k;
        if (*path)
            path++;
    }
    return -1;
}

/* 1 if the ELF file has no program interpreter (static, static-pie),
 * 2 if it is not a 64-bit ELF of this machine, 0 otherwise (dynamic ELF or
 * not ELF at all, e.g. a script). */
static int elf_kind(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf64_Ehdr eh;
    int r = 0;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        goto out;
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
        r = 2;
        goto out;
    }
    r = 1;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
            (ssize_t)sizeof ph)
            break;
        if (ph.p_type == PT_INTERP) {
            r = 0;
            break;
        }
    }
out:
    close(fd);
    return r;
}

/* A section of the ELF file, read whole (at most 64 MiB); NULL if it cannot
 * be. The caller frees it. */
static void *read_section(int fd, const Elf64_Shdr *sh)
{
    if (sh->sh_size == 0 || sh->sh_size > ((uint64_t)64 << 20))
        return NULL;
    void *b = malloc(sh->sh_size + 1);
    if (b && pread(fd, b, sh->sh_size, (off_t)sh->sh_offset) != (ssize_t)sh->sh_size) {
        free(b);
        return NULL;
    }
    if (b)
        ((char *)b)[sh->sh_size] = 0;   /* a string table ends in NUL */
    return b;
}

/* Does the symbol table sym (n symbols, names in str of str_size bytes)
 * define malloc? */
static int defines_malloc(const Elf64_Sym *sym, size_t n, const char *str, size_t str_size)
{
    for (size_t k = 0; k < n; k++) {
        int bind = ELF64_ST_BIND(sym[k].st_info);
        if (sym[k].st_name < str_size && sym[k].st_shndx != SHN_UNDEF &&
            (bind == STB_GLOBAL || bind == STB_WEAK) && strcmp(str + sym[k].st_name, "malloc") == 0)
            return 1;
    }
    return 0;
}

/* The sanitizer runtime that replaces malloc among the libraries the
 * dynamic section dyn (n entries, names in str) needs, or NULL. */
static const char *needs_sanitizer(const Elf64_Dyn *dyn, size_t n, const char *str,
                                   size_t str_size)
{
    static const char *const sanitizers[] = {"libasan.so", "libtsan.so", "liblsan.so",
                                             "libhwasan.so", "libmsan.so"};
    for (size_t k = 0; k < n; k++) {
        if (dyn[k].d_tag != DT_NEEDED || dyn[k].d_un.d_val >= str_size)
            continue;
        const char *lib = str + dyn[k].d_un.d_val;
        for (size_t j = 0; j < sizeof sanitizers / sizeof *sanitizers; j++)
            if (strncmp(lib, sanitizers[j], strlen(sanitizers[j])) == 0)
                return lib;
    }
    return NULL;
}

/* Does the dynamic ELF file at path keep its malloc from the profiler?
 * It does when it defines malloc itself (a sanitizer's runtime linked in,
 * as clang's AddressSanitizer does, or a built-in allocator): its own
 * definition comes before any preloaded one. And when it needs a
 * sanitizer's runtime library that replaces malloc (gcc's
 * AddressSanitizer: libasan insists on being first and stops the
 * program). Then *why says which, and 1 is returned; 0 otherwise, or if
 * the file cannot be read (the program then runs as usual). */
static int keeps_malloc(const char *path, char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    int r = 0;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0)
        goto out;
    size_t shsize = (size_t)eh.e_shnum * sizeof *sh;
    sh = malloc(shsize);
    if (!sh || pread(fd, sh, shsize, (off_t)eh.e_shoff) != (ssize_t)shsize)
        goto out;
    for (unsigned i = 0; i < eh.e_shnum && !r; i++) {
        if ((sh[i].sh_type != SHT_DYNSYM && sh[i].sh_type != SHT_DYNAMIC) ||
            sh[i].sh_link >= eh.e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        char *str = read_section(fd, strs);
        void *tab = str ? read_section(fd, &sh[i]) : NULL;
        const char *lib;
        if (tab && sh[i].sh_type == SHT_DYNSYM &&
            defines_malloc(tab, sh[i].sh_size / sizeof(Elf64_Sym), str, strs->sh_size)) {
            snprintf(why, why_size, "it defines malloc itself (a sanitizer's runtime "
                     "linked in, or an allocator of its own)");
            r = 1;
        } else if (tab && sh[i].sh_type == SHT_DYNAMIC &&
                   (lib = needs_sanitizer(tab, sh[i].sh_size / sizeof(Elf64_Dyn), str,
                                          strs->sh_size))) {
            snprintf(why, why_size, "it is built with a sanitizer (%s), whose runtime "
                     "replaces malloc", lib);
            r = 1;
        }
        free(tab);
        free(str);
    }
out:
    free(sh);
    close(fd);
    return r;
}

/* Would the loader run the program at path in secure-execution mode
 * (ld.so(8): AT_SECURE), where it ignores LD_PRELOAD? It does when the
 * program is set-user-ID or set-group-ID to another user or group than
 * ours, or has file capabilities and we are not root. */
static int secure_exec(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
        return 1;
    if ((st.st_mode & S_ISGID) && st.st_gid != getgid())
        return 1;
    return getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0;
}

static pid_t child_pid;

/* The program was killed by sig: end this process by the same signal, so
 * that whoever ran `memtrace run` sees what it would have seen running the
 * program itself (a shell stops its loop on a SIGINT death, not on an exit
 * status of 130). Our own core is not wanted: the program dumped its own.
 * Returns 128 + sig only if the signal did not end us. */
static int end_by_signal(int sig)
{
    struct rlimit core;
    if (getrlimit(RLIMIT_CORE, &core) == 0) {
        core.rlim_cur = 0;
        setrlimit(RLIMIT_CORE, &core);
    }
    fflush(NULL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}

/* The signals passed on to the program. One that the kernel sent (the
 * terminal's ^C, ^\ (quit), hangup or resize: si_code SI_KERNEL) went to
 * the program too, as it is in the terminal's foreground process group:
 * that one is not passed on, or the program would get it twice. One sent
 * to memtrace run by a process (kill, timeout, a supervisor) is. (One that
 * a process sends to the whole group, `kill -INT -PGID` or timeout without
 * --foreground, reaches the program twice: siginfo does not tell a
 * group's signal from a process's.) */
static const int forwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2,
                                SIGALRM, SIGWINCH};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (child_pid > 0 && si->si_code != SI_KERNEL)
        kill(child_pid, sig);
}

/* Is the trace at path well-formed and without an allocation? Then *every
 * gets the bytes per sample of its rate. It stops at the first
 * allocation, so a big trace costs no more than a small one. */
static int sampled_nothing(const char *path, double *every)
{
    mt_reader_options opt = {.skip_backtraces = 1};
    mt_reader *r = mt_reader_create(&opt);
    int none = 0;
    if (r && mt_reader_open_file(r, path) == MT_OK) {
        mt_event ev;
        int st;
        while ((st = mt_reader_next(r, &ev)) == MT_OK && ev.kind != MT_EVENT_ALLOC)
            ;
        double rate = mt_reader_info(r)->sample_rate;
        none = st == MT_EOF && rate > 0;
        if (none)
            *every = 8.0 / rate;
    }
    mt_reader_close(r);
    return none;
}

/* Is b what stat said of a file earlier (a): the same file, unchanged? */
static int same_file_state(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Whether another process holds the lock the profiler takes on a trace
 * file (lockf) at path: it is writing that trace. */
static int trace_locked(const char *path)
{
    struct stat reg;
    if (stat(path, &reg) != 0 || !S_ISREG(reg.st_mode))
        return 0;       /* (opening a FIFO and closing it would end its reader's input) */
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    int locked = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lockf(fd, F_TEST, 0) != 0 &&
                 (errno == EACCES || errno == EAGAIN);
    close(fd);
    return locked;
}

/* Can a trace be written at path (absolute)? When it names a file
 * (is_file), that file may exist and must then be writable and not a
 * directory; its directory must let a file be created either way. 0, or
 * -1 with errno set. Found out before the program starts: the library
 * would only say so and run it untraced. */
static int trace_writable(const char *path, int is_file)
{
    char dir[2 * PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = 0;        /* "/x" -> "/", "/a/x" -> "/a" */
    struct stat st;
    if (is_file && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        if (access(path, W_OK) != 0)
            return -1;
    }
    if (access(dir, W_OK | X_OK) != 0)
        return -1;
    /* a name too long for the directory's file system (with room for
     * the process id that replaces %p, or ends the default name) */
    long name_max = pathconf(dir, _PC_NAME_MAX);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base) + (!is_file || strstr(base, "%p") ? 12 : 0);
    if (name_max > 0 && len > (size_t)name_max) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* access() says yes to root wherever the permissions are the obstacle,
     * and knows nothing of file systems that hold no new files (/proc,
     * /sys): a file is made there, and removed at once. */
    char probe[sizeof dir + 32];
    int fd;
    if (is_file && !strstr(base, "%p")) {
        if (stat(path, &st) == 0)
            return 0;               /* (writable, as seen above) */
        snprintf(probe, sizeof probe, "%s", path);
        fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    } else {
        snprintf(probe, sizeof probe, "%s/.memtrace-run.XXXXXX", dir);
        fd = mkostemp(probe, O_CLOEXEC);
    }
    if (fd < 0 && errno == ENOENT)
        errno = EACCES;     /* (/proc's answer, its directory being there) */
    if (fd < 0)
        return errno == EEXIST ? 0 : -1;    /* (made meanwhile: seen above) */
    close(fd);
    unlink(probe);
    return 0;
}

int cmd_run(int argc, char **argv)
{
    const char *output = NULL, *context = NULL;
    double rate = 0;
    int have_rate = 0, follow_fork = 0, follow_exec = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (cli_is_help(a)) {
            usage_run(stdout);
            return EXIT_OK;
        }
        if (strcmp(a, "--follow-fork") == 0) {
            follow_fork = 1;
            continue;
        }
        if (strcmp(a, "--follow-exec") == 0) {
            follow_exec = 1;
            continue;
        }
        static const char *const value_opts[] = {"-o", "--output", "--context", "--rate",
                                                 "--every", NULL};
        const char *name = NULL, *v;
        int k = cli_opt_one_of("run", argc, argv, &i, value_opts, &name, &v);
        if (k < 0)
            return EXIT_USAGE;
        if (k == 0)
            return cli_usage_error("run", "unknown option '%s'", a);
        if (name[1] == 'o' || name[2] == 'o') {
            if (!*v)
                return cli_usage_error("run", "empty trace file name");
            output = v;
        } else if (name[2] == 'c') {
            context = v;
        } else if (name[2] == 'r') {
            char *end = (char *)v;
            const char *e;
            rate = 0;
            if (mt_plain_number(v, &e) && !*e)
                rate = strtod(v, &end);
            if (end == v || *end || !(rate >= MIN_RATE && rate <= 1))
                return cli_usage_error("run", "--rate %s: the rate must be a number, "
                                       "1e-15 <= R <= 1", v);
            have_rate++;
        } else {
            double bytes;
            if (parse_bytes(v, &bytes) < 0 || !(8.0 / bytes >= MIN_RATE))
                return cli_usage_error("run", "--every %s: expected a number of bytes "
                                       "from 8 to 8e15", v);
            rate = 8.0 / bytes;
            have_rate++;
        }
    }
    if (have_rate > 1)
        return cli_usage_error("run", "give --rate or --every once");
    /* Without the options, the variables the program would get (as the
     * library reads them, checked here rather than said by the library
     * once the program runs untraced). */
    const char *env_rate = getenv("MEMTRACE_RATE");
    if (!have_rate && env_rate && *env_rate &&
        (mt_env_rate(env_rate, &rate) < 0 || rate < MIN_RATE))
        return cli_usage_error("run", "MEMTRACE_RATE=%s in the environment: the rate must "
                               "be a number, 1e-15 <= R <= 1 (or give --rate)", env_rate);
    const char *env_context = getenv("MEMTRACE_CONTEXT");
    if (context && strlen(context) > MT_PROFILER_CONTEXT_MAX)
        return cli_usage_error("run", "--context: %zu bytes, more than the %d a trace "
                               "holds", strlen(context), MT_PROFILER_CONTEXT_MAX);
    if (!context && env_context && strlen(env_context) > MT_PROFILER_CONTEXT_MAX)
        return cli_usage_error("run", "MEMTRACE_CONTEXT in the environment: %zu bytes, "
                               "more than the %d a trace holds (or give --context)",
                               strlen(env_context), MT_PROFILER_CONTEXT_MAX);
    if (i >= argc)
        return cli_usage_error("run", "missing CMD to run");
    char **cmd = argv + i;

    char lib[PATH_MAX + 64], prog[PATH_MAX];
    if (find_preload(lib, sizeof lib) < 0) {
        const char *env = getenv("MEMTRACE_PRELOAD");
        if (env && *env)
            cli_error("run", "MEMTRACE_PRELOAD=%s: not a file (it names the profiler "
                      "library, %s)", env, MT_PRELOAD_SONAME);
        else
            cli_error("run", "cannot find %s (set MEMTRACE_PRELOAD to its path)", MT_PRELOAD_SONAME);
        return EXIT_DATA;
    }
    if (strpbrk(lib, " :\t\n")) {
        /* (the loader splits LD_PRELOAD at each, and has no escape) */
        cli_error("run", "the profiler library's path, %s, holds a space or a colon, "
                  "which LD_PRELOAD cannot carry: install memtrace where its path has "
                  "none, or set MEMTRACE_PRELOAD to a copy of %s in such a place",
                  lib, MT_PRELOAD_SONAME);
        return EXIT_DATA;
    }
    if (resolve(cmd[0], prog, sizeof prog) < 0) {
        cli_error("run", "%s: command not found or not executable", cmd[0]);
        return EXIT_DATA;
    }
    int kind = elf_kind(prog);
    if (kind == 1) {
        cli_error("run", "%s is statically linked: it cannot be profiled by preloading "
                         "a library (link it dynamically)", prog);
        return EXIT_DATA;
    }
    if (kind == 2) {
        cli_error("run", "%s is not a 64-bit x86-64 program: the profiler library cannot "
                         "be loaded into it", prog);
        return EXIT_DATA;
    }
    char why[256];
    if (keeps_malloc(prog, why, sizeof why)) {
        cli_error("run", "%s cannot be profiled by preloading: %s", prog, why);
        return EXIT_DATA;
    }
    if (secure_exec(prog)) {
        cli_error("run", "%s is set-user-ID, set-group-ID or has file capabilities: the "
                         "loader ignores LD_PRELOAD in it, so it cannot be profiled by "
                         "preloading", prog);
        return EXIT_DATA;
    }

    /* The trace's absolute name (the program may change directory); by
     * default completed in the child with its pid. */
    char cwd[PATH_MAX] = "/", pattern[2 * PATH_MAX + 64];
    if ((!output || output[0] != '/') && !getcwd(cwd, sizeof cwd)) {
        if (errno == ERANGE)
            cli_error("run", "the current directory's path is longer than %d bytes: "
                      "give -o an absolute path", PATH_MAX);
        else
            cli_error("run", "cannot get the current directory: %s", strerror(errno));
        return EXIT_DATA;
    }
    if (!output)
        snprintf(pattern, sizeof pattern, "%s/memtrace.", cwd);
    else if (output[0] == '/')
        snprintf(pattern, sizeof pattern, "%s", output);
    else
        snprintf(pattern, sizeof pattern, "%s/%s", cwd, output);
    if (trace_writable(pattern, output != NULL) != 0) {
        if (output)
            cli_error("run", "cannot write the trace to %s: %s", output, strerror(errno));
        else
            cli_error("run", "cannot write a trace in %s: %s", cwd, strerror(errno));
        return EXIT_DATA;
    }
    if (output && !strstr(output, "%p") && trace_locked(pattern)) {
        /* (the profiler would run the program untraced, and the file is
         * another run's) */
        cli_error("run", "%s is being written by another process (it holds the file's "
                  "lock): give another -o", output);
        return EXIT_DATA;
    }

    /* Where the profiler says why it stopped tracing (a full disk), if it
     * does: then the trace is not "written" but cut short. */
    char status_file[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(status_file, sizeof status_file, "%s/memtrace-run.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int sfd = mkstemp(status_file);
    if (sfd >= 0)
        close(sfd);
    else
        status_file[0] = 0;

    /* Whether this run writes the trace: a file already there is not
     * "written" unless it changed. */
    struct stat before;
    int existed = output && stat(pattern, &before) == 0;  /* (the default: a new pid) */

    fflush(stdout);
    fflush(stderr);
    /* The forwarded signals are blocked until child_pid is set (in the
     * child, until their actions are the caller's again). A signal that
     * memtrace run's caller ignores stays ignored, for both. */
    struct sigaction fwd = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART},
                     old[NFORWARDED];
    sigset_t block, mask;
    sigemptyset(&block);
    for (size_t k = 0; k < NFORWARDED; k++) {
        sigaction(forwarded[k], NULL, &old[k]);
        if (old[k].sa_handler != SIG_IGN)
            sigaction(forwarded[k], &fwd, NULL);
        sigaddset(&block, forwarded[k]);
    }
    sigprocmask(SIG_BLOCK, &block, &mask);
    pid_t pid = fork();
    if (pid < 0) {
        cli_error("run", "cannot fork: %s", strerror(errno));
        sigprocmask(SIG_SETMASK, &mask, NULL);
        if (status_file[0])
            unlink(status_file);
        return EXIT_DATA;
    }
    if (!output) {
        size_t k = strlen(pattern);
        snprintf(pattern + k, sizeof pattern - k, "%ld.ctf", (long)(pid ? pid : getpid()));
    }
    if (pid == 0) {
        for (size_t k = 0; k < NFORWARDED; k++)
            sigaction(forwarded[k], &old[k], NULL);
        sigprocmask(SIG_SETMASK, &mask, NULL);
        char buf[32];
        const char *pre = getenv("LD_PRELOAD");
        char preload[2 * PATH_MAX + 2];
        if (pre && *pre)
            snprintf(preload, sizeof preload, "%s:%s", lib, pre);
        else
            snprintf(preload, sizeof preload, "%s", lib);
        setenv("LD_PRELOAD", preload, 1);
        setenv("MEMTRACE", pattern, 1);
        if (have_rate) {
            snprintf(buf, sizeof buf, "%.17g", rate);
            setenv("MEMTRACE_RATE", buf, 1);
        }
        if (context)
            setenv("MEMTRACE_CONTEXT", context, 1);
        if (follow_fork)
            setenv("MEMTRACE_FOLLOW_FORK", "1", 1);
        else
            unsetenv("MEMTRACE_FOLLOW_FORK");
        if (follow_exec)
            setenv("MEMTRACE_FOLLOW_EXEC", "1", 1);
        else
            unsetenv("MEMTRACE_FOLLOW_EXEC");
        snprintf(buf, sizeof buf, "%ld", (long)getpid());
        setenv("MEMTRACE_ROOT_PID", buf, 1);   /* CMD writes FILE itself */
        if (status_file[0])
            setenv("MEMTRACE_RUN_STATUS", status_file, 1);
        else
            unsetenv("MEMTRACE_RUN_STATUS");
        execv(prog, cmd);
        int e = errno;
        if (e == ENOEXEC) {
            /* a script without a #! line: the shell runs it, as execvp,
             * env and the shells do */
            int n = 0;
            while (cmd[n])
                n++;
            char **sh = calloc((size_t)n + 2, sizeof *sh);
            if (sh) {
                sh[0] = "/bin/sh";
                sh[1] = prog;
                for (int j = 1; j <= n; j++)
                    sh[j + 1] = cmd[j];
                execv("/bin/sh", sh);
                e = errno;
            }
        }
        fprintf(stderr, "memtrace run: cannot run %s: %s\n", prog, strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    sigprocmask(SIG_SETMASK, &mask, NULL);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            cli_error("run", "waitpid: %s", strerror(errno));
            if (status_file[0])
                unlink(status_file);
            return EXIT_DATA;
        }

    /* The names the profiler gave the traces: %p is a process id; without
     * it, children's traces are NAME-without-.ctf.PID.ctf. */
    char path[sizeof pattern + 32], gl[sizeof pattern + 32];
    size_t o = 0, g = 0;
    for (const char *p = pattern; *p && o + 24 < sizeof path; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof path - o, "%ld", (long)pid);
            gl[g++] = '*';
            p++;
        } else {
            path[o++] = *p;
            gl[g++] = *p;
        }
    }
    path[o] = gl[g] = 0;
    if (!strstr(pattern, "%p")) {
        size_t k = strlen(path);
        if (k > 4 && strcmp(path + k - 4, ".ctf") == 0)
            k -= 4;
        snprintf(gl, sizeof gl, "%.*s.*.ctf", (int)k, path);
    }
    /* why the profiler stopped tracing, if it did ("memtrace: ...") */
    char stop[PATH_MAX + 256] = "";
    if (status_file[0]) {
        int sf = open(status_file, O_RDONLY | O_CLOEXEC);
        ssize_t k = sf >= 0 ? read(sf, stop, sizeof stop - 1) : -1;
        stop[k > 0 ? k : 0] = 0;
        if (sf >= 0)
            close(sf);
        unlink(status_file);
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) != SIGINT && WTERMSIG(status) != SIGPIPE)
        fprintf(stderr, "memtrace run: %s was killed by signal %d (%s)%s\n", cmd[0],
                WTERMSIG(status), strsignal(WTERMSIG(status)),
                WCOREDUMP(status) ? ", core dumped" : "");
    struct stat st;
    if (stop[0]) {
        const char *w = strncmp(stop, "memtrace: ", 10) == 0 ? stop + 10 : stop;
        fprintf(stderr, "memtrace run: %s\n", w);
        /* (a trace that could not be opened at all holds nothing) */
        if (!strstr(w, "; running untraced"))
            fprintf(stderr, "memtrace run: %s holds the events until then\n", path);
    } else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* (a FIFO, a device: what went there cannot be seen here) */
        fprintf(stderr, "memtrace run: trace sent to %s\n", path);
    } else if (stat(path, &st) == 0 && st.st_size > 0 &&
               !(existed && same_file_state(&before, &st))) {
        fprintf(stderr, "memtrace run: trace written to %s\n", path);
        double every;
        if (sampled_nothing(path, &every)) {
            char b[32];
            mt_fmt_bytes(b, sizeof b, every);
            fprintf(stderr, "memtrace run: no allocation was sampled (one sample per %s "
                    "allocated on average): for a short run, sample more with --every "
                    "or --rate\n", b);
            if (!follow_exec)   /* (a script's work is done by its children) */
                fprintf(stderr, "memtrace run: if %s does its work in programs it "
                        "starts, trace them with --follow-exec\n", cmd[0]);
        }
    } else {
        fprintf(stderr, "memtrace run: no trace was written to %s\n", path);
    }
    if (follow_fork || follow_exec) {
        glob_t gb;
        if (glob(gl, 0, NULL, &gb) == 0) {
            size_t more = 0;
            for (size_t j = 0; j < gb.gl_pathc; j++)
                if (strcmp(gb.gl_pathv[j], path) != 0)
                    more++;
            if (more)
                fprintf(stderr, "memtrace run: %zu more trace%s of child processes: %s\n",
                        more, more > 1 ? "s" : "", gl);
            globfree(&gb);
        }
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return end_by_signal(WTERMSIG(status));
    return EXIT_DATA;
}
