# Stands in for $IDF_PATH/tools/cmake/project.cmake when check_project.cmake reads the ESP-IDF
# files of boards/esp32 (nothing to do: the checker defines the ESP-IDF commands it needs).
