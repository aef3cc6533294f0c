// kernelevolve-cpu-harness: checks and times one CPU candidate (see harness.h).
#include "platforms/cpu/harness.h"

int main(int argc, char** argv) { return kernelevolve::platforms::cpu::HarnessMain(argc, argv); }
