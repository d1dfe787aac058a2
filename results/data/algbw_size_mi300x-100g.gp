set terminal svg size 960,600 dynamic
set output 'algbw_size_mi300x-100g.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "Algorithm bandwidth vs per-GPU size\nmi300x-100g, 4 x 8 GPUs, zipf (skew 0.8)"
set xlabel 'mean bytes per GPU (MiB)'
set ylabel 'algbw (GB/s)'
set logscale x 2
set yrange [0:19.3329]
plot 'algbw_size_mi300x-100g.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 7 ps 1.2 lc rgb '#9400d3' title 'fast', 'algbw_size_mi300x-100g.dat' using 1:3 with linespoints lw 4.5 dt 2 pt 6 ps 1.2 lc rgb '#009e73' title 'nccl', 'algbw_size_mi300x-100g.dat' using 1:5 with linespoints lw 2.0 dt 4 pt 9 ps 1.2 lc rgb '#e69f00' title 'hier', 'algbw_size_mi300x-100g.dat' using 1:6 with linespoints lw 2.0 dt 5 pt 13 ps 1.2 lc rgb '#c8b400' title 'spreadout', 'algbw_size_mi300x-100g.dat' using 1:7 with linespoints lw 2.0 dt 3 pt 11 ps 1.2 lc rgb '#0072b2' title 'fanout', 'algbw_size_mi300x-100g.dat' using 1:4 with linespoints lw 2.9 dt 3 pt 4 ps 1.7 lc rgb '#56b4e9' title 'pxn'
