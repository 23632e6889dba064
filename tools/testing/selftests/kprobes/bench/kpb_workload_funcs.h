/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Figure 15 (kpb_main.c's "workload_entry" and "workload_ret"): the
 * kernel functions probed while kpb_workload runs.  Each must be hit at
 * least once by every iteration of its loop (open, read, close and stat
 * of a file in /tmp, getpid(), fork(), exec of itself, exit and wait):
 * kpb_main.c reports a probe that counted no hit as an error.
 *
 * How the list was chosen: read off the 6.12 source along those system
 * calls' paths, then kept only the functions that the x86-64 bench
 * vmlinux of both trees and an arm64 vmlinux of ours list in their
 * ftrace call sites (so neither inlined nor notrace), and that return
 * to their caller (a kretprobe on do_exit() would never fire).  Not
 * yet checked against a guest's hit counts; i386's stat() may take
 * statx(), which the stat functions here still cover.
 */
#ifndef _KPB_WORKLOAD_FUNCS_H
#define _KPB_WORKLOAD_FUNCS_H

#define KPB_WL_NFUNCS	50

static const char *const kpb_wl_funcs[KPB_WL_NFUNCS] = {
	/* open() */
	"do_sys_openat2", "getname_flags", "get_unused_fd_flags", "alloc_fd",
	"do_filp_open", "path_openat", "alloc_empty_file", "may_open",
	"vfs_open", "do_dentry_open", "fd_install", "putname",
	/* read() */
	"ksys_read", "vfs_read", "rw_verify_area", "generic_file_read_iter",
	"filemap_read", "touch_atime",
	/* close() */
	"file_close_fd", "__fput",
	/* stat() */
	"vfs_statx", "filename_lookup", "path_lookupat", "vfs_getattr",
	"vfs_getattr_nosec", "generic_fillattr",
	/* getpid() */
	"__task_pid_nr_ns",
	/* fork() */
	"kernel_clone", "copy_process", "dup_fd", "copy_creds", "sched_fork",
	"copy_thread", "alloc_pid", "wake_up_new_task",
	/* the child's execve() */
	"do_execveat_common", "alloc_bprm", "copy_string_kernel",
	"copy_strings", "bprm_execve", "load_elf_binary", "begin_new_exec",
	"setup_new_exec", "setup_arg_pages", "finalize_exec",
	/* its exit, and the parent's waitpid() */
	"exit_files", "mmput", "release_task", "kernel_wait4", "do_wait",
};

#endif /* _KPB_WORKLOAD_FUNCS_H */
