// A stand-in for an old glibc in test images: a shared library that defines
// only the GLIBC_2.2.5 version (fake_old_libc.map), installed in an image as
// libc.so.6 and libm.so.6. The real dynamic loader then refuses primus-cli
// exactly as an old distribution's would: "version `GLIBC_2.34' not found".
extern "C" {
int primus_fake_old_libc = 1;
}
