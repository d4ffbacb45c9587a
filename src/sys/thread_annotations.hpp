// thread_annotations.hpp — Clang's thread-safety attributes, by name.
//
// Which lock guards which data is written next to the data, and
// `clang -Wthread-safety` (scripts/check-thread-safety, run by the lint)
// checks every access against it. GCC, which builds the product, knows none
// of these attributes and would reject them under -Werror, so under GCC
// they expand to nothing: the annotations cost nothing at run time and
// change no code either way.
#pragma once

#if defined(__clang__)
#define COURIER_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define COURIER_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (sys::Mutex), and one that holds a lock for its
// scope (sys::MutexLock).
#define COURIER_CAPABILITY(x) COURIER_THREAD_ANNOTATION(capability(x))
#define COURIER_SCOPED_CAPABILITY COURIER_THREAD_ANNOTATION(scoped_lockable)
// Data read or written only with the lock held.
#define COURIER_GUARDED_BY(x) COURIER_THREAD_ANNOTATION(guarded_by(x))
// A function that must be called with the lock held (or not held).
#define COURIER_REQUIRES(...) COURIER_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define COURIER_EXCLUDES(...) COURIER_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// A function that takes or lets go of the lock.
#define COURIER_ACQUIRE(...) COURIER_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define COURIER_RELEASE(...) COURIER_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// A function that returns the lock a caller must take.
#define COURIER_RETURN_CAPABILITY(x) COURIER_THREAD_ANNOTATION(lock_returned(x))
// Lock order: this lock is taken only while the other is held, never the
// other way round.
#define COURIER_ACQUIRED_AFTER(...) COURIER_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// A pointer whose pointee is read or written only with the lock held.
#define COURIER_PT_GUARDED_BY(x) COURIER_THREAD_ANNOTATION(pt_guarded_by(x))
