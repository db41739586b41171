// BT_TEST_REPLACED_MALLOC: 1 where glibc's malloc is not the process's (an ASan or TSan build, gcc's or clang's
// spelling, or a libc other than glibc), so tests of glibc's allocator policy skip.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BT_TEST_SANITIZED_CLANG 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(BT_TEST_SANITIZED_CLANG) || \
    !defined(__GLIBC__)
#define BT_TEST_REPLACED_MALLOC 1
#else
#define BT_TEST_REPLACED_MALLOC 0
#endif
