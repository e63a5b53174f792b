"""Footprint of the firmware images, in two halves joined by one interface: the report.

MEASURING (measure.py, with elf.py, stack.py and parts.py) reads one linked image and its
call graphs and writes its report, bin/<image>.footprint.json, after every link
(emcp_add_firmware() in boards/CMakeLists.txt); the link fails when the image is over a budget
or its worst-case stack does not fit. WRITING (doc.py, regions.py, write.py) reads reports only,
never an ELF file, and writes docs/footprint.md and the footprint regions of README.md and the
other documents (regions.DOC_REGIONS), or checks that they are what it would write. Neither
half imports the other; report.py reads reports for the writers. The report is the interface:
a field added by the measurer is read by name by the writer, so a change to one is a change
to this list.

The report (a JSON object):
  name, board            the image's target name (emcp-minimal-mps2-an385) and its board
  flash, ram             bytes: .text + .ARM.exidx + .data; .data + .bss
  ram_objects            [[demangled name, bytes]]: the six biggest RAM objects and every one of 256 B or more
  stack_region           bytes of the linker's stack region (an RTOS image: its request task's stack)
  stack                  the worst case (stack.worst_stack): main, main_path, interrupt,
                         interrupt_handler, total, bounded, notes, indirect_targets [, path_skip]
  rtos                   an RTOS image's: kernel_dir, task_context, guard, tasks [{label, entry,
                         depth, path, bounded, stack_symbol, stack, need [, calls]}], main_stack
                         {region, main, main_path, interrupts, handlers, total, interrupts_nest}
  flash_budget, ram_budget, flash_target, ram_target   bytes, 0 for none (emcp_add_firmware())
  options                ["NAME=VALUE"]: the image's DEFINES and APP_DEFINES
  compiler, cpu_flags    the compiler and its version; the board's CPU flags
  flash_parts            [[part label (parts.LABELS, then the padding row), bytes]]
  documented             false for a NOT_DOCUMENTED image (docs/footprint.md leaves it out)
  problems               what failed the link (over a budget, a stack that does not fit)
  board_title, board_note   the board's section heading and note (board.cmake: EMCP_BOARD_TITLE,
                         EMCP_BOARD_FOOTPRINT_NOTE)
  description            what the image is (emcp_add_firmware()'s DESCRIPTION), if given
  variant_of             the image (name without the board) this one measures differently (VARIANT_OF)
  feature                {what, base}: the feature the image measures against image `base`
                         (FEATURE, FEATURE_BASE): a row of the table of what each feature adds
"""
