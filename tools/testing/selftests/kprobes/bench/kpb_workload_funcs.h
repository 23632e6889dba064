/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Figure 15 (kpb_main.c's "workload_entry" and "workload_ret"): the
 * kernel functions probed while kpb_workload runs, the 50 it calls most
 * often, one list per architecture.  Measured once, with
 * kpb_workload_profile.sh in the benchmark guest of the untouched tree:
 * ftrace's function tracer on the workload's own processes, three
 * iterations of its loop (open, read, close and stat of a file in /tmp,
 * getpid(), fork(), exec of itself, exit and wait).  Kept: the most called
 * functions that kprobes may probe, under their own names; the
 * compiler's copies (foo.isra.0 and the like) are left out, as their
 * names change with the compiler, and so is what the blacklist forbids
 * (arm64's do_mem_abort).  Fork, exec and exit make this mostly memory
 * management: page tables, rmap, slab, locks.  kpb_main.c reports a
 * probe that counted no hit.
 */
#ifndef _KPB_WORKLOAD_FUNCS_H
#define _KPB_WORKLOAD_FUNCS_H

#define KPB_WL_NFUNCS	50

#ifdef CONFIG_ARM64
/*
 * Calls in three iterations: from 1364 (vm_normal_page) down to 83
 * (mm_trace_rss_stat).
 */
static const char *const kpb_wl_funcs[KPB_WL_NFUNCS] = {
	"vm_normal_page", "folio_remove_rmap_ptes", "__tlb_remove_folio_pages",
	"next_uptodate_folio", "set_pte_range", "folio_mark_accessed",
	"folio_add_file_rmap_ptes", "__sync_icache_dcache",
	"__mod_node_page_state", "up_write", "get_partial_node",
	"__cond_resched", "rcu_all_qs", "kmem_cache_alloc_noprof", "down_write",
	"kmem_cache_free", "__mod_zone_page_state", "__pte_offset_map_lock",
	"up_read", "get_page_from_freelist", "__alloc_pages_noprof",
	"mod_node_page_state", "down_read_trylock", "pte_offset_map_nolock",
	"handle_mm_fault", "__handle_mm_fault", "get_pfnblock_flags_mask",
	"free_unref_page_commit", "lock_vma_under_rcu", "make_vfsuid",
	"do_el0_svc", "__init_rwsem", "decay_load", "arch_counter_read",
	"free_unref_page", "rcu_segcblist_enqueue", "get_user_arg_ptr",
	"folio_mapping", "call_rcu", "lru_add", "anon_vma_interval_tree_remove",
	"anon_vma_interval_tree_insert", "__folio_batch_add_and_move",
	"__folio_alloc_noprof", "folio_add_new_anon_rmap", "folio_add_lru_vma",
	"dput", "__vmf_anon_prepare", "tlb_remove_table", "mm_trace_rss_stat",
};
#else
/*
 * Calls in three iterations: from 1617 (vm_normal_page) down to 97
 * (__tlb_remove_page_size).
 */
static const char *const kpb_wl_funcs[KPB_WL_NFUNCS] = {
	"vm_normal_page", "folio_remove_rmap_ptes", "arch_check_zapped_pte",
	"next_uptodate_folio", "__tlb_remove_folio_pages", "set_pte_range",
	"folio_mark_accessed", "folio_add_file_rmap_ptes",
	"_raw_spin_unlock_irqrestore", "_raw_spin_lock_irqsave",
	"_raw_spin_lock", "__mod_node_page_state", "up_write",
	"get_partial_node", "__cond_resched", "rcu_all_qs", "down_write",
	"kmem_cache_alloc_noprof", "kmem_cache_free", "__pte_offset_map_lock",
	"_raw_spin_trylock", "up_read", "mod_node_page_state",
	"get_page_from_freelist", "__alloc_pages_noprof",
	"get_pfnblock_flags_mask", "free_unref_page_commit",
	"down_read_trylock", "pte_offset_map_nolock", "handle_mm_fault",
	"__handle_mm_fault", "__mod_zone_page_state", "lock_vma_under_rcu",
	"kernel_init_pages", "make_vfsuid", "blake2s_compress_generic",
	"x64_sys_call", "__init_rwsem", "pte_mkwrite", "folio_mapping",
	"mm_trace_rss_stat", "__folio_batch_add_and_move",
	"__folio_alloc_noprof", "lru_add", "folio_add_new_anon_rmap",
	"folio_add_lru_vma", "__vmf_anon_prepare", "flush_tlb_batched_pending",
	"jiffies_read", "__tlb_remove_page_size",
};
#endif

#endif /* _KPB_WORKLOAD_FUNCS_H */
