"""rules_cc for Bazel 4.2 (Debian's bazel-bootstrap), offline.

Debian's bazel-rules-cc package is newer than its Bazel: it loads `use_cpp_toolchain`, which Bazel 4
does not have, so loading `@bazel_tools//tools/cpp` fails. Bazel 4's own tools only need these names
to forward to the native rules, which is all this file does. The project builds no C++ with Bazel.
"""

def cc_binary(**kwargs):
    native.cc_binary(**kwargs)

def cc_library(**kwargs):
    native.cc_library(**kwargs)

def cc_test(**kwargs):
    native.cc_test(**kwargs)

def cc_import(**kwargs):
    native.cc_import(**kwargs)

def cc_proto_library(**kwargs):
    native.cc_proto_library(**kwargs)

def objc_library(**kwargs):
    native.objc_library(**kwargs)

def cc_toolchain(**kwargs):
    native.cc_toolchain(**kwargs)

def cc_toolchain_suite(**kwargs):
    native.cc_toolchain_suite(**kwargs)
