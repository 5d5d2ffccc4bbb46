# SPDX-License-Identifier: GPL-2.0
# For the users of libflowjit: include this with LIBFLOWJIT_DIR set to
# this directory, then build $(LIBFLOWJIT_SRCS) with your own flags (so
# that sanitizer, fuzzer and static builds cover it too) and add
# -I$(LIBFLOWJIT_DIR) to find libflowjit.h. Programs built outside the
# kernel tree also add $(LIBFLOWJIT_UAPI) for <linux/flowjit.h>; those
# inside it use the installed headers (KHDR_INCLUDES) instead.
LIBFLOWJIT_SRCS := $(addprefix $(LIBFLOWJIT_DIR)/,crc32c.c record.c reasm.c store.c tie.c)
LIBFLOWJIT_HDRS := $(LIBFLOWJIT_DIR)/libflowjit.h \
		   $(LIBFLOWJIT_DIR)/../../../include/uapi/linux/flowjit.h
LIBFLOWJIT_UAPI := -I$(LIBFLOWJIT_DIR)/../../../include/uapi
# The live ring buffer reader (flowjit_ring.h: Linux only, libc and uapi)
# for programs that read flowjit records without perf: add these too.
LIBFLOWJIT_RING_SRCS := $(LIBFLOWJIT_DIR)/ring.c
LIBFLOWJIT_RING_HDRS := $(LIBFLOWJIT_DIR)/flowjit_ring.h
# The perf.data reader and writer (pdata.h), for the users that read or
# write perf.data files: libc only, no flowjit parts.
LIBPDATA_SRCS := $(LIBFLOWJIT_DIR)/pdata.c
LIBPDATA_HDRS := $(LIBFLOWJIT_DIR)/pdata.h
