from contractlang.cli import main

main()
