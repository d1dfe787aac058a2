set terminal svg size 960,600 dynamic
set output 'speedup_skew_mi300x-100g.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "FAST speedup over each baseline vs Zipf skew\nmi300x-100g, 4 x 8 GPUs, zipf, 128 MiB per GPU, mean of 2 seeds"
set xlabel 'Zipf skew of pair sizes (0 = uniform random)'
set ylabel 'speedup (baseline time / FAST time)'
set xrange [-0.04:0.94]
set yrange [0.809522:3.57145]
plot 'speedup_skew_mi300x-100g.dat' using 1:2 with linespoints lw 2.0 dt 2 pt 6 ps 1.2 lc rgb '#009e73' title 'nccl', 'speedup_skew_mi300x-100g.dat' using 1:3 with linespoints lw 2.0 dt 1 pt 5 ps 1.2 lc rgb '#56b4e9' title 'pxn', 'speedup_skew_mi300x-100g.dat' using 1:4 with linespoints lw 2.0 dt 4 pt 9 ps 1.2 lc rgb '#e69f00' title 'hier', 'speedup_skew_mi300x-100g.dat' using 1:5 with linespoints lw 2.0 dt 5 pt 13 ps 1.2 lc rgb '#c8b400' title 'spreadout', 'speedup_skew_mi300x-100g.dat' using 1:6 with linespoints lw 2.0 dt 3 pt 11 ps 1.2 lc rgb '#0072b2' title 'fanout', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'parity'
