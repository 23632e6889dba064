/*
 * The calibration guest (harness/pace.sh): a fixed piece of work that
 * QEMU's TCG runs the way it runs a test kernel, so that the time it
 * takes on this host, now, says how fast guests run here.  A Multiboot
 * image (qemu-system-x86_64 -kernel loads it in 32-bit protected mode,
 * paging off, interrupts off); assembled with the host's binutils:
 *
 *	as --32 -o pace.o pace.S	(no C preprocessor: .equ, not #define)
 *	ld -m elf_i386 -Ttext=0x100000 -o pace.elf pace.o
 *
 * The work is what dominates a TCG guest kernel: loads and stores that
 * miss QEMU's software TLB (a 4 MiB area walked a page and a line at a
 * time), indirect calls and returns (each a translated-block lookup) and
 * data-dependent branches.  It ends by writing to QEMU's isa-debug-exit
 * port (-device isa-debug-exit,iobase=0xf4,iosize=4), which exits QEMU
 * with status 1.
 */
	.equ PACE_ROUNDS, 4000		/* about a second on a quick host */
	.equ PACE_STEPS, 1024		/* per round */
	.equ AREA, 0x1000000		/* 16 MiB: the guest has 64 MiB */
	.equ AREA_SIZE, 0x400000
	.equ STRIDE, 4096 + 64

	.text
	.code32
	.align 4
	/* Multiboot header: magic, no flags (an ELF image), checksum. */
	.long 0x1badb002
	.long 0
	.long -0x1badb002

	.globl _start
_start:
	mov $stack_top, %esp
	mov $PACE_ROUNDS, %ebp
1:	mov $AREA, %esi
	mov $PACE_STEPS, %ecx
2:	mov (%esi), %eax
	add %ecx, %eax
	mov %eax, (%esi)
	mov %ecx, %ebx
	and $7, %ebx
	call *pace_ops(, %ebx, 4)
	add $STRIDE, %esi
	cmp $(AREA + AREA_SIZE), %esi
	jb 3f
	sub $AREA_SIZE, %esi
3:	dec %ecx
	jnz 2b
	dec %ebp
	jnz 1b
	mov $0, %al
	out %al, $0xf4
4:	hlt
	jmp 4b

/* Eight small steps, one per call: arithmetic, a branch, the stack. */
op0:	add $1, %edx
	ret
op1:	xor %eax, %edx
	ret
op2:	test $1, %edx
	jz 5f
	inc %edx
5:	ret
op3:	push %eax
	pop %eax
	ret
op4:	lea 3(%edx, %eax, 2), %edx
	ret
op5:	rol $3, %edx
	ret
op6:	sub %ecx, %edx
	ret
op7:	imul $13, %edx
	ret

	.data
	.align 4
pace_ops:
	.long op0, op1, op2, op3, op4, op5, op6, op7

	.bss
	.align 16
	.space 4096
stack_top:
