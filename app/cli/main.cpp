#include <iostream>

int main() {
    std::cerr << "cfp: under construction\n";
    return 1;
}
