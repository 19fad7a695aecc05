from arena_core.cli import main

main()
