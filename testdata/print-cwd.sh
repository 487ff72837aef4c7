#!/bin/sh
# print-cwd.sh: prints its working directory with every symlink resolved.
pwd -P
