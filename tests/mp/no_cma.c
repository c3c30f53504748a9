/*
 * tests/mp/no_cma RANK PROGRAM ARGS...: runs PROGRAM; on world rank RANK (mpirun's
 * OMPI_COMM_WORLD_RANK) a seccomp filter first makes process_vm_readv fail with EPERM, as a
 * container's or a hardened system's policy would. That rank cannot read its peers by single
 * copy: ucoll must find out at init, turn single copy off on every rank and say so once.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int refuse_process_vm_readv(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(code) / sizeof(code[0])), code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: no_cma RANK PROGRAM [ARGS...]\n");
        return 2;
    }
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (r != NULL && atoi(r) == atoi(argv[1]) && refuse_process_vm_readv() != 0) {
        perror("no_cma: seccomp");
        return 2;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
