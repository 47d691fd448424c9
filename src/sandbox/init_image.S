/* toolgate-init's image (src/sandbox/init/init.c, linked statically by
 * the Makefile), compiled into the library as bytes: run_init.c puts it
 * in a sealed memfd, which every sandbox execs as its PID 1. */
	.section .rodata
	.balign 16
	.globl sb_init_image
	.hidden sb_init_image
sb_init_image:
	.incbin TG_INIT_IMAGE
	.globl sb_init_image_end
	.hidden sb_init_image_end
sb_init_image_end:
	.section .note.GNU-stack,"",%progbits
